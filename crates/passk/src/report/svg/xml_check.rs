//! A small well-formedness check of chart output, shared by the chart tests.

/// Checks that `svg` is well-formed XML as far as these charts go: one root, balanced and properly
/// nested tags, quoted attributes, no raw `<` or stray `&` in text. Returns the element names in
/// document order.
pub(super) fn check_xml(svg: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = svg;
    let mut roots = 0;
    if let Some(after) = rest.strip_prefix("<?xml") {
        let end = after.find("?>").expect("unterminated declaration");
        rest = &after[end + 2..];
    }
    while let Some(open) = rest.find('<') {
        check_text(&rest[..open]);
        let tag_end = find_tag_end(&rest[open..]).expect("unterminated tag") + open;
        let tag = &rest[open + 1..tag_end];
        rest = &rest[tag_end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let top = stack.pop().expect("closing tag without opening");
            assert_eq!(top, name.trim(), "mismatched closing tag");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let body = tag.trim_end_matches('/');
        let name: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == ':')
            .collect();
        assert!(!name.is_empty(), "empty tag name in <{tag}>");
        check_attributes(&body[name.len()..]);
        if stack.is_empty() {
            roots += 1;
        }
        names.push(name.clone());
        if !self_closing {
            stack.push(name);
        }
    }
    check_text(rest);
    assert!(rest.trim().is_empty(), "text after the root element");
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
    assert_eq!(roots, 1, "exactly one root element");
    names
}

pub(super) fn find_tag_end(s: &str) -> Option<usize> {
    let mut in_quote = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_quote = !in_quote,
            '>' if !in_quote => return Some(i),
            _ => {}
        }
    }
    None
}

pub(super) fn check_attributes(attrs: &str) {
    let mut rest = attrs.trim();
    while !rest.is_empty() {
        let eq = rest.find('=').expect("attribute without value");
        let name = rest[..eq].trim();
        assert!(
            !name.is_empty() && !name.contains(' '),
            "bad attribute name {name:?}"
        );
        let after = &rest[eq + 1..];
        let value = after.strip_prefix('"').expect("unquoted attribute");
        let close = value.find('"').expect("unterminated attribute");
        let v = &value[..close];
        assert!(!v.contains('<'), "raw < in attribute");
        check_text(v);
        rest = value[close + 1..].trim_start();
    }
}

pub(super) fn check_text(text: &str) {
    assert!(!text.contains('>'), "raw > in text: {text:?}");
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        let after = &rest[amp + 1..];
        let semi = after.find(';').expect("unterminated entity");
        let entity = &after[..semi];
        assert!(
            ["amp", "lt", "gt", "quot", "apos"].contains(&entity),
            "unknown entity &{entity};"
        );
        rest = &after[semi + 1..];
    }
    assert!(
        !text
            .chars()
            .any(|c| (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r')),
        "control character in text"
    );
}

pub(super) fn count(names: &[String], name: &str) -> usize {
    names.iter().filter(|n| *n == name).count()
}

pub(super) fn nasty() -> String {
    "a<b & \"c\" 'd' > e\u{1}".to_string()
}
