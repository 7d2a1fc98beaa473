//! Base64 as Go's `encoding/base64` `StdEncoding` decodes it: what Ollama's JSON decoder does to
//! a native message's images (`ImageData` is a `[]byte`) and its OpenAI layer to image and audio
//! data, so that the stub refuses the same texts at the same byte.

/// Where Go's `base64.StdEncoding.DecodeString` refuses `src` (the byte offset its
/// `CorruptInputError` names), or `None` where it decodes: padded standard base64 read four
/// characters at a time, line breaks skipped, nothing after the padding.
pub(super) fn error_at(src: &[u8]) -> Option<usize> {
    let is_break = |c: u8| c == b'\n' || c == b'\r';
    let skip_breaks = |mut at: usize| {
        while at < src.len() && is_break(src[at]) {
            at += 1;
        }
        at
    };
    let mut si = 0;
    loop {
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                // A quantum cut short (padding is required): its start, breaks not counted.
                return (j > 0).then(|| si - j);
            }
            let c = src[si];
            si += 1;
            if c.is_ascii_alphanumeric() || c == b'+' || c == b'/' {
                j += 1;
                continue;
            }
            if is_break(c) {
                continue;
            }
            if c != b'=' || j < 2 {
                return Some(si - 1);
            }
            if j == 2 {
                // "==" is expected, the first "=" is already read.
                si = skip_breaks(si);
                if si == src.len() {
                    return Some(src.len());
                }
                if src[si] != b'=' {
                    return Some(si - 1);
                }
                si += 1;
            }
            si = skip_breaks(si);
            return (si < src.len()).then_some(si);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_refused_where_go_refuses_it() {
        // (input, offset of Go's CorruptInputError), from encoding/base64's decodeQuantum.
        for (text, want) in [
            ("", None),
            ("QUJD", None),
            ("QUI=", None),
            ("QQ==", None),
            ("QQ==\n", None),
            ("QU\nJD", None),
            ("Q", Some(0)),
            ("QUJDQ", Some(4)),
            ("QU\nJ", Some(1)),
            ("QUJ*", Some(3)),
            ("Q===", Some(1)),
            ("=QUJ", Some(0)),
            ("QQ=", Some(3)),
            ("QQ=A", Some(2)),
            ("QUI=QUJD", Some(4)),
            ("QQ==x", Some(4)),
        ] {
            assert_eq!(error_at(text.as_bytes()), want, "{text:?}");
        }
    }
}
