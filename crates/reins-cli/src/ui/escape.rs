//! Text from a run made safe where the inbox puts it: HTML (content and attributes), a URL
//! path. (No script holds any: the pages' one script is a file of its own.)

use std::fmt::Write;

/// `text` with `& < > " '` escaped, safe in element content and quoted attributes, and
/// [`printable`](reins::text::printable): a bidirectional override in a model's argument would
/// make the page show them in another order than the tool gets them (in JSON the escape
/// written in their place reads back as the same character).
pub fn escape(text: &str) -> String {
    let text = reins::text::printable(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` percent-encoded for one URL path segment.
pub fn url_segment(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_from_a_model_is_escaped() {
        assert_eq!(
            escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
        assert_eq!(url_segment("run 1/x"), "run%201%2Fx");
    }

    #[test]
    fn text_that_would_reorder_or_hide_itself_is_shown_as_escapes() {
        // `"cat \u202e"` in a JSON argument: the page shows the escape, which reads back as
        // the same character when the person approves the arguments unchanged.
        let args = serde_json::json!({"path": "report\u{202e}fdp.exe", "bell": "\u{7}"});
        let shown = escape(&crate::approve::pretty(&args));
        assert!(shown.contains(r"report\u202efdp.exe"), "{shown}");
        let read_back: serde_json::Value =
            serde_json::from_str(&shown.replace("&quot;", "\"")).unwrap();
        assert_eq!(read_back, args);
    }
}
