pub mod parse;
pub mod emit;
