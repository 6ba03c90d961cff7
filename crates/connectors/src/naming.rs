//! The names connector tools get in front of the model. Anthropic's and OpenAI's tool names
//! both allow only `^[a-zA-Z0-9_-]{1,64}$`, so `connector.<name>.<tool>` is written
//! `mcp__<name>__<tool>`: a connector's name has no `_` (see [`crate::config::check_name`]),
//! so the first `__` after the prefix ends it and the mapping reverses exactly. A server tool
//! whose name has other characters, or whose model name would pass 64 characters, is not
//! offered (the tools listing says why). The built-in web fetch is `web_fetch`.

/// The prefix of every MCP connector tool's model name.
pub const PREFIX: &str = "mcp__";

/// The built-in web fetch tool's name (and the connector name it is audited under).
pub const WEB_FETCH: &str = "web_fetch";

/// Longest tool name both model APIs accept.
pub const MAX_MODEL_NAME: usize = 64;

/// The model name of a server's tool, or why it cannot be offered.
pub fn model_name(connector: &str, tool: &str) -> Result<String, String> {
    if tool.is_empty()
        || !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "the tool name `{tool}` has characters model APIs refuse (only a-z, A-Z, 0-9, `_` \
             and `-` are allowed)"
        ));
    }
    let name = format!("{PREFIX}{connector}__{tool}");
    if name.len() > MAX_MODEL_NAME {
        return Err(format!(
            "`{name}` is longer than the {MAX_MODEL_NAME} characters model APIs accept"
        ));
    }
    Ok(name)
}

/// The connector and server tool of a model name (`None` for names that are not a
/// connector's).
pub fn split(model_name: &str) -> Option<(&str, &str)> {
    let rest = model_name.strip_prefix(PREFIX)?;
    let (connector, tool) = rest.split_once("__")?;
    (!connector.is_empty() && !tool.is_empty()).then_some((connector, tool))
}

/// The connector a tool call belongs to, for the audit trail: `web_fetch` for the web fetch,
/// the connector's name for an MCP tool, `None` for sandbox tools.
pub fn connector_of(model_name: &str) -> Option<&str> {
    if model_name == WEB_FETCH {
        return Some(WEB_FETCH);
    }
    split(model_name).map(|(connector, _)| connector)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (connector, tool) in [
            ("github", "create_issue"),
            ("docs", "search"),
            ("a-b", "x__y"),
            ("z", "get-thing_2"),
        ] {
            let name = model_name(connector, tool).unwrap_or_default();
            assert!(name.len() <= MAX_MODEL_NAME);
            assert_eq!(split(&name), Some((connector, tool)), "{name}");
            assert_eq!(connector_of(&name), Some(connector));
        }
    }

    #[test]
    fn names_model_apis_refuse_are_not_offered() {
        assert!(model_name("docs", "files/read").is_err());
        assert!(model_name("docs", "a.b").is_err());
        assert!(model_name("docs", "").is_err());
        assert!(model_name("docs", &"x".repeat(60)).is_err());
    }

    #[test]
    fn sandbox_tools_belong_to_no_connector() {
        assert_eq!(connector_of("read_file"), None);
        assert_eq!(connector_of("run_bash"), None);
        assert_eq!(connector_of("web_fetch"), Some("web_fetch"));
        assert_eq!(split("mcp__x"), None);
    }
}
