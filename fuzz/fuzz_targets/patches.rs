//! Strategic merge and JSON 6902 patches of arbitrary documents: errors, never panics, and the
//! result still prints. The input is a target document and a patch, split at the first `\n%%\n`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::patch::{apply_json6902, strategic_merge, Schema};
use peerpods_build::yaml::{emit, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (target, patch) = text.split_once("\n%%\n").unwrap_or((text, ""));
    let (Ok(target), Ok(patch)) = (parse::parse_document(target), parse::parse_document(patch)) else { return };
    if target.is_object() && patch.is_object() {
        let mut merged = target.clone();
        if strategic_merge(&mut merged, patch.clone(), Schema::builtin(), None, None).is_ok() && !merged.is_null() {
            let _ = emit::emit_stream([&merged]);
        }
    }
    let mut patched = target;
    if apply_json6902(&mut patched, &patch).is_ok() {
        let _ = emit::emit_stream([&patched]);
    }
});
