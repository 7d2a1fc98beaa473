//! Model names the way Ollama reads them (`types/model/name.go`): `[host/][namespace/]model[:tag]`,
//! with `registry.ollama.ai`, `library` and `latest` filling the parts left out, compared without
//! regard to case. `/api/tags` and `/api/ps` answer `llama3.2:latest` for a request naming
//! `llama3.2`, so every match against a server answer goes through [`same_model`].

/// Host of a name without one.
pub const DEFAULT_HOST: &str = "registry.ollama.ai";
/// Namespace of a name without one.
pub const DEFAULT_NAMESPACE: &str = "library";
/// Tag of a name without one.
pub const DEFAULT_TAG: &str = "latest";

/// A model name with every part filled in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModelName {
    /// Registry host (`registry.ollama.ai`).
    pub host: String,
    /// Namespace (`library`).
    pub namespace: String,
    /// Model (`llama3.2`).
    pub model: String,
    /// Tag (`latest`).
    pub tag: String,
}

impl ModelName {
    /// Parses a name as Ollama's `ParseName` does: a digest suffix (`@sha256:…`) and a scheme
    /// (`https://`) are dropped, missing parts take the defaults.
    pub fn parse(name: &str) -> ModelName {
        let s = name.trim();
        let s = s.split_once('@').map_or(s, |(n, _)| n);
        let at = |i: Option<usize>| i.map_or(-1, |i| i as isize);
        let (rest, tag) = match s.rsplit_once(':') {
            Some((r, t)) if at(s.rfind(':')) > at(s.rfind('/')) => (r, t),
            _ => (s, ""),
        };
        let mut parts = rest.rsplitn(3, '/');
        let model = parts.next().unwrap_or_default();
        let namespace = parts.next().unwrap_or_default();
        let host = parts.next().unwrap_or_default();
        let host = host.split_once("://").map_or(host, |(_, h)| h);
        let or = |v: &str, d: &str| {
            if v.is_empty() {
                d.to_string()
            } else {
                v.to_string()
            }
        };
        ModelName {
            host: or(host, DEFAULT_HOST),
            namespace: or(namespace, DEFAULT_NAMESPACE),
            model: model.to_string(),
            tag: or(tag, DEFAULT_TAG),
        }
    }

    /// The fully qualified, lower-cased form: the key two names are equal under.
    pub fn key(&self) -> String {
        self.full().to_lowercase()
    }

    /// `registry.ollama.ai/library/llama3.2:latest`, as Ollama names a model in its errors.
    pub fn full(&self) -> String {
        format!(
            "{}/{}/{}:{}",
            self.host, self.namespace, self.model, self.tag
        )
    }

    /// The shortest form, as `/api/tags` and `/api/ps` list it (`llama3.2:latest`,
    /// `myns/model:tag`, `host/ns/model:tag`).
    pub fn shortest(&self) -> String {
        if !self.host.eq_ignore_ascii_case(DEFAULT_HOST) {
            format!(
                "{}/{}/{}:{}",
                self.host, self.namespace, self.model, self.tag
            )
        } else if !self.namespace.eq_ignore_ascii_case(DEFAULT_NAMESPACE) {
            format!("{}/{}:{}", self.namespace, self.model, self.tag)
        } else {
            format!("{}:{}", self.model, self.tag)
        }
    }
}

/// Whether two names denote the same model to Ollama (`llama3.2` ≡ `llama3.2:latest` ≡
/// `registry.ollama.ai/library/llama3.2:latest`).
pub fn same_model(a: &str, b: &str) -> bool {
    ModelName::parse(a).key() == ModelName::parse(b).key()
}

/// The shortest form of a name, as Ollama lists it.
pub fn shortest(name: &str) -> String {
    ModelName::parse(name).shortest()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_tagged_and_namespaced_names_normalise() {
        assert!(same_model("llama3.2", "llama3.2:latest"));
        assert!(same_model(
            "llama3.2",
            "registry.ollama.ai/library/llama3.2:latest"
        ));
        assert!(same_model("Qwen2.5-Coder:3B", "qwen2.5-coder:3b"));
        assert!(same_model("library/qwen2.5:3b", "qwen2.5:3b"));
        assert!(!same_model("llama3.2:1b", "llama3.2"));
        assert!(!same_model("myns/llama3.2", "llama3.2"));
        assert_eq!(shortest("llama3.2"), "llama3.2:latest");
        assert_eq!(shortest("myns/m"), "myns/m:latest");
        assert_eq!(
            shortest("example.com:5000/ns/m:q4"),
            "example.com:5000/ns/m:q4"
        );
        assert_eq!(
            shortest("registry.ollama.ai/library/m:7b@sha256:ab"),
            "m:7b"
        );
        assert_eq!(
            ModelName::parse("qwen2.5:3b").full(),
            "registry.ollama.ai/library/qwen2.5:3b"
        );
        assert_eq!(ModelName::parse("https://h.io/ns/m").host, "h.io");
    }
}
