//! What a person is told about a server API: what the server is called, how to start it, how to
//! get a model onto it, and how to serve a model whose template drops the tools. Each API answers
//! for itself in its own folder ([`super::ollama::PROVIDER`], [`super::openai::PROVIDER`]); the
//! runner's errors and `passk doctor` only read these texts, so a new API writes its own.

use crate::wire::chat::ApiKind;

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
}

impl Provider {
    /// How to make `model` available: one sentence.
    pub fn fetch(&self, model: &str) -> String {
        (self.fetch)(model)
    }
}

impl ApiKind {
    /// The texts of this API's servers in general. Over the OpenAI-compatible API, once the
    /// server's kind is known, [`super::openai::server::provider`] is more precise.
    pub fn provider(self) -> &'static Provider {
        match self {
            ApiKind::Ollama => &super::ollama::PROVIDER,
            ApiKind::OpenAi => &super::openai::PROVIDER,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_names_its_own_server_and_fix() {
        let ollama = ApiKind::Ollama.provider();
        assert!(ollama.start.contains("ollama serve"));
        assert!(ollama.fetch("m").contains("passk pull m"));
        let openai = ApiKind::OpenAi.provider();
        for text in [openai.name, openai.start, openai.tools] {
            assert!(
                !text.contains("ollama") && !text.contains("Ollama"),
                "{text}"
            );
        }
        assert!(openai.tools.contains("--jinja"));
        assert!(!openai.fetch("m").contains("pull"));
    }
}
