//! Placeholder until the parser lands.
use serde_json::Value;
#[derive(Debug)]
pub struct ParseError { pub line: usize, pub column: usize, pub message: String }
pub fn parse_documents(text: &str) -> Result<Vec<Value>, ParseError> {
    Ok(vec![serde_json::from_str(text).map_err(|e| ParseError { line: e.line(), column: e.column(), message: e.to_string() })?])
}
pub fn parse_document(text: &str) -> Result<Value, ParseError> {
    Ok(parse_documents(text)?.pop().unwrap_or(Value::Null))
}
