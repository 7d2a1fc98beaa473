//! What a person is told about a server API: what the server is called, how to start it, how to
//! get a model onto it, and how to serve a model whose template drops the tools. Each API answers
//! for itself in its own folder ([`super::ollama::PROVIDER`], [`super::openai::PROVIDER`]); the
//! runner's errors and `passk doctor` only read these texts, so a new API writes its own.

/// The texts one server API gives a person.
#[derive(Debug)]
pub struct Provider {
    /// Who serves the run, as an error names it ("Ollama").
    pub name: &'static str,
    /// How to bring the server up, or point passk at it: one sentence.
    pub start: &'static str,
    /// The route that describes one model.
    pub model_route: &'static str,
    /// How to serve a model whose chat template drops the tools: one sentence.
    pub tools: &'static str,
    /// How to make a missing model available, given its name.
    pub fetch: fn(&str) -> String,
    /// The run's settings this API never sends (`num_ctx`, `keep_alive`): the server fixed them
    /// when it started. The report's settings table leaves them out.
    pub unsent: &'static [&'static str],
}

impl Provider {
    /// How to make `model` available: one sentence.
    pub fn fetch(&self, model: &str) -> String {
        (self.fetch)(model)
    }
}
