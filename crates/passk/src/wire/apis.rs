//! Every API passk speaks, in the one place that lists them: the client of each [`ApiKind`] and
//! the texts a person is told about its servers. Each API's folder knows only itself; a new API
//! adds its arm to each `match` here.

use crate::wire::chat::ApiKind;
use crate::wire::chat_api::ChatApi;
use crate::wire::config::ClientConfig;
use crate::wire::error::WireError;
use crate::wire::provider::Provider;

/// The client of API `kind` for one server: how the runner picks an API.
pub fn connect(kind: ApiKind, config: ClientConfig) -> Result<Box<dyn ChatApi>, WireError> {
    match kind {
        ApiKind::Ollama => Ok(Box::new(crate::wire::ollama::client::Client::new(config)?)),
        ApiKind::OpenAi => Ok(Box::new(crate::wire::openai::client::Client::new(config)?)),
    }
}

impl ApiKind {
    /// The texts of this API's servers in general. Over the OpenAI-compatible API, once the
    /// server's kind is known, [`crate::wire::openai::server::provider`] is more precise.
    pub fn provider(self) -> &'static Provider {
        match self {
            ApiKind::Ollama => &crate::wire::ollama::PROVIDER,
            ApiKind::OpenAi => &crate::wire::openai::PROVIDER,
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

    #[test]
    fn every_api_is_named_as_records_write_it() {
        for kind in ApiKind::ALL {
            assert_eq!(ApiKind::named(kind.as_str()), Some(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
        assert_eq!(ApiKind::named("vllm"), None);
        assert!(ApiKind::Ollama.provider().unsent.is_empty());
        assert_eq!(ApiKind::OpenAi.provider().unsent, ["num_ctx", "keep_alive"]);
    }
}
