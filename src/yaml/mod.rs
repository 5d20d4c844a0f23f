//! YAML at the edges: parsing (typed as kustomize types scalars) and kustomize's exact output bytes.
pub mod comments;
pub mod emit;
pub mod empty_nulls;
pub mod go_json_text;
pub mod go_syntax;
pub mod locate;
pub mod memo;
pub mod node_emit;
pub mod node_path;
pub mod node_tree;
pub mod parse;
pub mod positions;
pub mod scalar;

/// Whether go-yaml v2 (YAML 1.1) reads `text`, unquoted, as something other than a string
/// (kyaml's `IsValueNonString`, for one-line text).
pub fn reads_as_non_string_in_yaml_1_1(text: &str) -> bool {
    !text.is_empty() && emit::resolves_to_non_string(text)
}

/// A JSON number as Go's `encoding/json` prints it (kustomize round-trips every resource through it).
pub fn go_number_json(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let rust = format!("{f:e}");
        let (mantissa, exp) = rust.split_once('e').unwrap_or((&rust, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        if exp < 0 {
            format!("{mantissa}e-{}", -exp)
        } else {
            format!("{mantissa}e+{exp:02}")
        }
    } else {
        format!("{f}")
    }
}

/// Go's `underscoreOK`: underscores only between digits (or after a base prefix).
pub(crate) fn go_underscore_ok(s: &[u8]) -> bool {
    let mut saw = b'^';
    let mut s = s;
    if !s.is_empty() && (s[0] == b'-' || s[0] == b'+') {
        s = &s[1..];
    }
    let mut hex = false;
    let mut i = 0;
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = s[1].eq_ignore_ascii_case(&b'x');
    }
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits, in `%e` form when the exponent
/// is below -4 or at least 6 (used for floats in output and in `$(VAR)` text).
pub fn write_go_format_g(f: f64, out: &mut String) {
    use std::fmt::Write;
    if f.is_nan() {
        out.push_str("NaN");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "+Inf" } else { "-Inf" });
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. "-1.2345675e6".
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits
    };
    let nd = digits.len() as i32;
    let dp = exp + 1; // position of the decimal point relative to the digits
    if neg {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let ae = exp.unsigned_abs();
        if ae < 10 {
            out.push('0');
        }
        let _ = write!(out, "{ae}");
    } else if dp <= 0 {
        out.push_str("0.");
        for _ in 0..(-dp) {
            out.push('0');
        }
        out.push_str(&digits);
    } else if dp >= nd {
        out.push_str(&digits);
        for _ in 0..(dp - nd) {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
}

#[cfg(test)]
mod tests {
    use super::go_number_json;

    fn n(f: f64) -> String {
        go_number_json(&serde_json::Number::from_f64(f).unwrap())
    }

    #[test]
    fn floats_print_as_go_encoding_json_prints_them() {
        assert_eq!(n(1.0), "1");
        assert_eq!(n(1.5), "1.5");
        assert_eq!(n(1e20), "100000000000000000000");
        assert_eq!(n(1e21), "1e+21");
        assert_eq!(n(1e-7), "1e-7");
        assert_eq!(n(-2.5e-9), "-2.5e-9");
    }
}
