//! Parts of a reply that are never calls: reasoning blocks and a pasted-back tool list. They are
//! blanked (replaced by spaces, so positions hold) before the text is scanned for calls.

/// Reasoning blocks as thinking models write them into the text (open tag, close tag).
pub const REASONING_TAGS: [(&str, &str); 4] = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("[THINK]", "[/THINK]"),
];

/// The tool list of a chat template (Qwen's, Hermes'), which small models sometimes echo.
pub const TOOLS_TAG: (&str, &str) = ("<tools>", "</tools>");

/// The content with every reasoning block and echoed tool list replaced by spaces. An open tag that
/// never closes runs to the end (the reply was cut mid-thought); a close tag with no open tag before
/// it ends reasoning that started with the reply (templates that put the open tag in the prompt).
pub fn blank(content: &str) -> String {
    let mut bytes = content.as_bytes().to_vec();
    for (open, close) in REASONING_TAGS {
        blank_pairs(content, &mut bytes, open, close, true);
    }
    blank_pairs(content, &mut bytes, TOOLS_TAG.0, TOOLS_TAG.1, false);
    // Only whole ASCII tags and what lies between them were replaced, so this never fails.
    String::from_utf8(bytes).unwrap_or_else(|_| content.to_string())
}

fn blank_pairs(content: &str, bytes: &mut [u8], open: &str, close: &str, leading_close: bool) {
    let mut from = 0;
    if leading_close
        && let Some(c) = content.find(close)
        && content.find(open).is_none_or(|o| o > c)
    {
        from = c + close.len();
        bytes[..from].fill(b' ');
    }
    while let Some(o) = content[from..].find(open).map(|o| from + o) {
        let end = content[o + open.len()..]
            .find(close)
            .map_or(content.len(), |c| o + open.len() + c + close.len());
        bytes[o..end].fill(b' ');
        from = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_and_tool_lists_are_blanked_in_place() {
        let s = "<think>call cancel_order {}</think>ok <tools>[{}]</tools> é";
        let b = blank(s);
        assert_eq!(b.len(), s.len());
        assert!(b.contains("ok") && b.ends_with(" é") && !b.contains("cancel"));
        assert!(!b.contains('{'));
        assert_eq!(blank("a</think>b").trim(), "b");
        assert_eq!(blank("a<think>b {").trim(), "a");
        assert_eq!(blank("[THINK]x[/THINK]y").trim(), "y");
    }
}
