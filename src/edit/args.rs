//! The arguments of the edit commands, read as kustomize reads them.
use super::EditError;
use crate::transform::images::split_image;

/// `*` as a new name, tag or digest keeps the value already in the kustomization file.
pub const PRESERVE: &str = "*";

/// One `edit set image` argument: an `images` entry (empty strings are absent fields).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageOverride {
    pub name: String,
    pub new_name: String,
    pub new_tag: String,
    pub digest: String,
}

/// kustomize's message for an image argument it cannot read.
pub const INVALID_IMAGE: &str = "invalid format of image, use one of the following options:
- <image>=<newimage>:<newtag>
- <image>=<newimage>@<digest>
- <image>=<newimage>:<newtag>@<digest>
- <image>=<newimage>
- <image>:<newtag>
- <image>:<newtag>@<digest>
- <image>@<digest>";

/// Reads one image argument: `name=newName[:tag][@digest]`, `name:tag[@digest]`,
/// `name@digest`, where `*` keeps the file's new name, tag or digest. An argument with
/// neither `=`, `:` nor `@` is refused.
pub fn parse_image(arg: &str) -> Result<ImageOverride, EditError> {
    let (key, value) = match arg.split_once('=') {
        Some((key, value)) => (key, value),
        None => ("", arg),
    };
    let (name, tag, digest) = split_image(value);
    if name == arg {
        return Err(EditError::Usage(INVALID_IMAGE.into()));
    }
    let (name, new_name) = if key.is_empty() { (name, "") } else { (key, name) };
    Ok(ImageOverride { name: name.into(), new_name: new_name.into(), new_tag: tag.into(), digest: digest.into() })
}

/// Every image argument, one per image name (a later argument for the same name wins), in
/// name order.
pub fn parse_images(args: &[String]) -> Result<Vec<ImageOverride>, EditError> {
    if args.is_empty() {
        return Err(EditError::Usage("no image specified".into()));
    }
    let mut by_name = std::collections::BTreeMap::new();
    for arg in args {
        let image = parse_image(arg)?;
        by_name.insert(image.name.clone(), image);
    }
    Ok(by_name.into_values().collect())
}

impl ImageOverride {
    /// This argument applied to an existing entry: `*` takes the entry's value. What the
    /// argument leaves out is dropped, as kustomize replaces the whole entry.
    pub fn merged_with(&self, new_name: &str, new_tag: &str, digest: &str) -> ImageOverride {
        let keep = |arg: &str, file: &str| if arg == PRESERVE { file.to_string() } else { arg.to_string() };
        ImageOverride {
            name: self.name.clone(),
            new_name: keep(&self.new_name, new_name),
            new_tag: keep(&self.new_tag, new_tag),
            digest: keep(&self.digest, digest),
        }
    }

    /// The entry as written: fields in go-yaml's key order; a `*` with nothing to keep is dropped.
    pub fn fields(&self) -> Vec<(&'static str, &str)> {
        [("digest", &self.digest), ("name", &self.name), ("newName", &self.new_name), ("newTag", &self.new_tag)]
            .into_iter()
            .filter(|(key, value)| *key == "name" || !(value.is_empty() || *value == PRESERVE))
            .map(|(key, value)| (key, value.as_str()))
            .collect()
    }
}

/// kustomize's message for a replica argument it cannot read.
pub const INVALID_REPLICA: &str = "invalid format of replica, use the following format: <name>=<count>";

/// Every `name=count` argument (a later one for the same name wins), in name order.
pub fn parse_replicas(args: &[String]) -> Result<Vec<(String, i64)>, EditError> {
    if args.is_empty() {
        return Err(EditError::Usage("no replicas specified".into()));
    }
    let mut by_name = std::collections::BTreeMap::new();
    for arg in args {
        let parts: Vec<&str> = arg.split('=').collect();
        let [name, count] = parts[..] else { return Err(EditError::Usage(INVALID_REPLICA.into())) };
        // Go's strconv.ParseInt(s, 10, 64): an optional sign and decimal digits.
        let count: i64 = count.parse().map_err(|_| EditError::Usage(INVALID_REPLICA.into()))?;
        by_name.insert(name.to_string(), count);
    }
    Ok(by_name.into_iter().collect())
}

/// `key:value` arguments of `add label` and `add annotation` (`kind` names which, for
/// messages): a value in double quotes loses them, a key alone has the empty value, a later
/// argument for the same key wins. In key order.
pub fn parse_metadata(args: &[String], kind: &str) -> Result<Vec<(String, String)>, EditError> {
    if args.is_empty() {
        return Err(EditError::Usage(format!("must specify {kind}")));
    }
    let mut pairs = std::collections::BTreeMap::new();
    for arg in args {
        match arg.find(':') {
            Some(0) => return Err(EditError::Usage(format!("invalid {kind}: '{arg}' (need k:v pair where v may be quoted)"))),
            None => pairs.insert(arg.clone(), String::new()),
            Some(colon) => {
                let value = &arg[colon + 1..];
                let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                    Some(inner) if value.len() >= 2 => inner,
                    _ => value,
                };
                pairs.insert(arg[..colon].to_string(), value.to_string())
            }
        };
    }
    Ok(pairs.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(arg: &str) -> ImageOverride {
        parse_image(arg).unwrap_or_else(|e| panic!("{arg}: {e}"))
    }

    fn entry(name: &str, new_name: &str, new_tag: &str, digest: &str) -> ImageOverride {
        ImageOverride { name: name.into(), new_name: new_name.into(), new_tag: new_tag.into(), digest: digest.into() }
    }

    const DIGEST: &str = "sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3";

    #[test]
    fn every_argument_form_of_set_image() {
        let cases = [
            ("image1=my-image1:my-tag", entry("image1", "my-image1", "my-tag", "")),
            ("image1=my-image1:1234", entry("image1", "my-image1", "1234", "")),
            (&format!("image1=my-image1@{DIGEST}"), entry("image1", "my-image1", "", DIGEST)),
            (&format!("image1=my-image1:my-tag@{DIGEST}"), entry("image1", "my-image1", "my-tag", DIGEST)),
            ("image1=my-image1", entry("image1", "my-image1", "", "")),
            ("image1:my-tag", entry("image1", "", "my-tag", "")),
            (&format!("image1:my-tag@{DIGEST}"), entry("image1", "", "my-tag", DIGEST)),
            (&format!("image1@{DIGEST}"), entry("image1", "", "", DIGEST)),
            // A registry port is not a tag; the tag comes after the path.
            ("ngnix=localhost:5000/my-project/ngnix", entry("ngnix", "localhost:5000/my-project/ngnix", "", "")),
            ("ngnix=localhost:5000/my-project/ngnix:dev-01", entry("ngnix", "localhost:5000/my-project/ngnix", "dev-01", "")),
            ("quay.io/org/app:v1.2.3", entry("quay.io/org/app", "", "v1.2.3", "")),
            // `*` keeps what the file has.
            ("image1=*:v1", entry("image1", "*", "v1", "")),
            ("image1=my-image1:*", entry("image1", "my-image1", "*", "")),
            (&format!("image2=*@{DIGEST}"), entry("image2", "*", "", DIGEST)),
            ("image1:*", entry("image1", "", "*", "")),
            // Argo CD substitutes variables before the call: any tag text is taken.
            ("app=registry/app:${ARGOCD_APP_REVISION}", entry("app", "registry/app", "${ARGOCD_APP_REVISION}", "")),
        ];
        for (arg, want) in cases {
            assert_eq!(image(arg), want, "{arg}");
        }
    }

    #[test]
    fn a_bare_name_is_refused_with_kustomizes_message() {
        for arg in ["bad", "args", "registry.example.com/app"] {
            assert_eq!(parse_image(arg).unwrap_err().to_string(), INVALID_IMAGE, "{arg}");
        }
        assert_eq!(parse_images(&[]).unwrap_err().to_string(), "no image specified");
    }

    #[test]
    fn the_last_argument_for_a_name_wins_and_names_come_sorted() {
        let args: Vec<String> = ["b:1", "a:2", "b:3"].iter().map(|s| s.to_string()).collect();
        let images = parse_images(&args).unwrap();
        assert_eq!(images, vec![entry("a", "", "2", ""), entry("b", "", "3", "")]);
    }

    #[test]
    fn a_star_takes_the_files_value_or_nothing() {
        let star = image("image1=*:v1");
        assert_eq!(star.merged_with("kept/name", "old", DIGEST), entry("image1", "kept/name", "v1", ""));
        assert_eq!(star.fields(), vec![("name", "image1"), ("newTag", "v1")]);
        let keep_all = image("image1=*:*").merged_with("n", "t", "");
        assert_eq!(keep_all.fields(), vec![("name", "image1"), ("newName", "n"), ("newTag", "t")]);
    }

    #[test]
    fn replicas_are_name_equals_integer() {
        let args: Vec<String> = ["web=3", "db=+2", "web=-1"].iter().map(|s| s.to_string()).collect();
        assert_eq!(parse_replicas(&args).unwrap(), vec![("db".to_string(), 2), ("web".to_string(), -1)]);
        for bad in ["web", "web=", "web=1.5", "web=1=2", "web= 1", "web=0x10"] {
            let err = parse_replicas(&[bad.to_string()]).unwrap_err().to_string();
            assert_eq!(err, INVALID_REPLICA, "{bad}");
        }
        assert_eq!(parse_replicas(&[]).unwrap_err().to_string(), "no replicas specified");
    }

    #[test]
    fn metadata_pairs_split_at_the_first_colon() {
        let args: Vec<String> = ["app:web", "url:http://x", "quoted:\"a b\"", "flag", "\":\""].iter().map(|s| s.to_string()).collect();
        let pairs = parse_metadata(&args, "label").unwrap();
        let want = [("\"", "\""), ("app", "web"), ("flag", ""), ("quoted", "a b"), ("url", "http://x")];
        assert_eq!(pairs, want.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>());
        let err = parse_metadata(&[":v".to_string()], "label").unwrap_err().to_string();
        assert_eq!(err, "invalid label: ':v' (need k:v pair where v may be quoted)");
        assert_eq!(parse_metadata(&[], "annotation").unwrap_err().to_string(), "must specify annotation");
    }
}
