//! Warnings collected during a build: printed on stderr, turned into errors by `--strict`.

/// The warnings of one build, in the order they arose.
#[derive(Debug, Default)]
pub struct Diagnostics {
    pub warnings: Vec<String>,
    /// Warnings about rules that matched nothing (the ones `--strict` refuses).
    pub unmatched: Vec<String>,
}

impl Diagnostics {
    /// A deprecation or other advisory notice, kustomize's wording.
    pub fn warn(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !self.warnings.contains(&text) {
            self.warnings.push(text);
        }
    }

    /// A notice printed each time its cause is met (kustomize repeats deprecation warnings per file).
    pub fn notice(&mut self, text: impl Into<String>) {
        self.warnings.push(text.into());
    }

    /// A patch target or image rule that matched nothing: kustomize is silent, we are not.
    pub fn unmatched(&mut self, kustomization: &str, what: &str) {
        let text = format!("{kustomization}: {what}");
        self.unmatched.push(text.clone());
        self.warn(format!("Warning: {text}"));
    }
}
