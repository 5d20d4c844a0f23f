//! The YAML parser never panics, and every document it returns prints (with kustomize's emitter)
//! to text that parses back to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::yaml::{emit, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(docs) = parse::parse_documents(text) else { return };
    for doc in docs.iter().filter(|d| !d.is_null()) {
        let printed = emit::emit_stream([doc]);
        let again = parse::parse_document(&printed)
            .unwrap_or_else(|e| panic!("emitted text does not parse: {e}\n--- input\n{text}\n--- emitted\n{printed}"));
        assert_eq!(&again, doc, "emitted text parses to another value\n--- input\n{text}\n--- emitted\n{printed}");
    }
});
