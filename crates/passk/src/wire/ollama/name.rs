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

/// Whether Ollama takes `name` for a model name (`parseAndValidateModelRef`,
/// `server/model_resolver.go`): trimmed, parsed bare (`ParseNameBare`: a separator with nothing on
/// one side promises a part that is missing), the parts left out taken from the defaults, and
/// every part valid (`isValidPart`): 1 to 80 bytes (a host up to 350), starting with a letter, digit
/// or `_`, then those or `-`, `_`, `.` (not in a namespace) and `:` (only in a host). A blank name is
/// not one.
pub fn is_valid(name: &str) -> bool {
    /// `cutPromised`: cut at the last `sep`; an empty side of a cut is a missing part.
    fn cut<'a>(s: &'a str, sep: char) -> Option<(Option<&'a str>, Option<&'a str>)> {
        let (before, after) = s.rsplit_once(sep)?;
        let part = |p: &'a str| (!p.is_empty()).then_some(p);
        Some((part(before), part(after)))
    }
    let valid = |part: Option<&str>, max: usize, dot: bool, colon: bool| {
        part.is_some_and(|p| {
            let b = p.as_bytes();
            let plain = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
            (1..=max).contains(&b.len())
                && plain(b[0])
                && b[1..]
                    .iter()
                    .all(|&c| plain(c) || c == b'-' || (c == b'.' && dot) || (c == b':' && colon))
        })
    };
    let s = name.trim();
    if s.is_empty() {
        return false;
    }
    let (mut rest, mut tag) = (Some(s), Some(DEFAULT_TAG));
    if s.rfind(':').map(|i| i as isize).unwrap_or(-1)
        > s.rfind('/').map(|i| i as isize).unwrap_or(-1)
    {
        (rest, tag) = cut(s, ':').unwrap_or((Some(s), None));
    }
    let rest = rest.unwrap_or_default();
    let (model, namespace, host) = match cut(rest, '/') {
        None => (Some(rest), Some(DEFAULT_NAMESPACE), Some(DEFAULT_HOST)),
        Some((before, model)) => match before.map(|b| (b, cut(b, '/'))) {
            None => (model, None, Some(DEFAULT_HOST)),
            Some((b, None)) => (model, Some(b), Some(DEFAULT_HOST)),
            Some((_, Some((host, namespace)))) => {
                // A missing host stays missing; one emptied by its scheme takes the default.
                let host = host
                    .map(|h| h.split_once("://").map_or(h, |(_, h)| h))
                    .map(|h| if h.is_empty() { DEFAULT_HOST } else { h });
                (model, namespace, host)
            }
        },
    };
    valid(host, 350, true, true)
        && valid(namespace, 80, false, false)
        && valid(model, 80, true, false)
        && valid(tag, 80, true, false)
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

/// The listed name nearest to `model` (a typo of it), when one is near: at most a third of its
/// characters (and at least one) away by edit distance, tag included.
pub fn nearest<'a>(model: &str, listed: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = ModelName::parse(model).shortest();
    let limit = (wanted.chars().count() / 3).max(1);
    listed
        .into_iter()
        .map(|name| (edit_distance(&wanted, name), name))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, name)| name)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_as_ollama_validates_them() {
        for ok in [
            "llama3.2",
            "qwen2.5-coder:3b",
            "myns/tiny:1b",
            "example.com:5000/ns/m:tag",
            "https://example.com/ns/m",
            "  padded  ",
            "a_b.c-d:Q4_K_M",
        ] {
            assert!(is_valid(ok), "{ok}");
        }
        for bad in [
            "",
            "   ",
            "bad name!",
            "m:",
            ":tag",
            "ns/",
            "/m",
            "/ns/m",
            "-m",
            "ns.x/m",
            "m:t:u",
            "é",
        ] {
            assert!(!is_valid(bad), "{bad:?}");
        }
        assert!(is_valid(&"m".repeat(80)) && !is_valid(&"m".repeat(81)));
    }

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
