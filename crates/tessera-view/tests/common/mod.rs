//! What the page tests share: fixtures, and reading elements back out of
//! a page.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;

/// `testdata/<rel>`.
pub fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// The HTML entities the pages write, undone.
pub fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Every `<tag ...>` element whose class is `class`, as its attributes.
pub fn elements(html: &str, tag: &str, class: &str) -> Vec<HashMap<String, String>> {
    let open = format!("<{tag} ");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let end = after.find('>').expect("an element ends");
        let attrs = parse_attributes(&after[..end]);
        if attrs.get("class").is_some_and(|c| c == class) {
            out.push(attrs);
        }
        rest = &after[end..];
    }
    out
}

fn parse_attributes(mut s: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    loop {
        s = s.trim_start();
        let Some(eq) = s.find("=\"") else { break };
        let name = s[..eq].trim().to_owned();
        let rest = &s[eq + 2..];
        let close = rest.find('"').expect("a quoted value ends");
        out.insert(name, unescape(&rest[..close]));
        s = &rest[close + 1..];
    }
    out
}

/// A fixture's AES key from its case description.
pub fn fixture_key(case: &str) -> [u8; 32] {
    let text = std::fs::read_to_string(testdata(case).join("expected.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let hex = doc["case"]["key"].as_str().expect("the case names its key");
    std::array::from_fn(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
}
