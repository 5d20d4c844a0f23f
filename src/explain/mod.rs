//! `explain`: for every field of a build's output, the file, line and column that set it, and
//! the step that wrote it. [`record`] runs during the build (only when asked); [`render`] prints
//! the output with that history as comments, one field's history, or JSON.
mod record;
pub mod render;

pub use record::Recorder;

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recorder")
    }
}
