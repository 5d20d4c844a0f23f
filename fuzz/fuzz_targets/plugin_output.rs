//! A plugin's output, through the one runner of programs (`process::Program`) and the decoder
//! of what a function prints: the input is a program's stdout (`cat` echoes it), under a bound
//! taken from its first byte. Never a panic; output within the bound arrives whole, output past
//! it is refused; whatever arrives decodes or fails cleanly.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::process::{Program, ProcessError};

fuzz_target!(|data: &[u8]| {
    let Some((&bound, output)) = data.split_first() else { return };
    let limit = usize::from(bound) * 64;
    match Program::new("cat").stdin(output.to_vec()).stdout_limit(limit).run() {
        Ok(done) => {
            assert!(output.len() <= limit, "{} bytes passed a bound of {limit}", output.len());
            assert_eq!(done.stdout, output);
            let _ = peerpods_build::functions::resource_list::decode_output(&String::from_utf8_lossy(&done.stdout));
        }
        Err(ProcessError::OutputTooLarge { .. }) => assert!(output.len() > limit),
        Err(other) => panic!("cat failed: {other}"),
    }
});
