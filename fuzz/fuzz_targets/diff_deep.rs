//! `diff`'s field comparison (`diff::fields::differing_paths`) over trees as deep as the parser
//! allows, on the build's large-stack threads as `diff` runs it: the input spells two trees
//! (each byte a step: into a map key, into a list, or a leaf), each repeated up to 1,530 deep.
//! The walk is linear in the size of the trees (a path is written out only where a difference
//! is), but the path of every difference is as long as the tree is deep, and these trees may
//! differ at every level: the output then grows with the square of the depth. The 3,000-deep
//! case that once overflowed the stack is `security::diff_walks_a_sequence_of_maps_three_thousand_deep`.
//! Never a panic or a stack overflow; no difference exactly when the trees are equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fn tree(steps: &[u8], depth: usize) -> Value {
    let mut value = json!(steps.len());
    for i in 0..depth {
        let step = steps.get(i % steps.len().max(1)).copied().unwrap_or(0);
        value = match step % 3 {
            0 => json!({ format!("k{}", step / 3): value }),
            1 => json!([value, step]),
            _ => json!({ "name": format!("n{step}"), "v": [value] }),
        };
    }
    value
}

fuzz_target!(|data: &[u8]| {
    let Some((&depth_byte, rest)) = data.split_first() else { return };
    let at = rest.iter().position(|b| *b == b'%').unwrap_or(rest.len());
    let (left, right) = (&rest[..at], rest.get(at + 1..).unwrap_or_default());
    let depth = usize::from(depth_byte) * 6;
    let (a, b) = (tree(left, depth), tree(right, depth));
    let result = peerpods_build::stack::on_large_stack(move || {
        let paths = peerpods_build::diff::fields::differing_paths(&a, &b);
        let equal = a == b;
        peerpods_build::stack::drop_on_large_stack((a, b));
        (paths, equal)
    });
    let (paths, equal) = result.expect("the large-stack pool");
    assert_eq!(paths.is_empty(), equal, "{paths:?}");
});
