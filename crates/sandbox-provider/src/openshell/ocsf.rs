//! OpenShell's OCSF shorthand log lines (level `OCSF`, target `ocsf`), parsed into
//! [`NetworkDenial`]s.
//!
//! Grammar: `CLASS:ACTIVITY [SEVERITY] ACTION DETAILS [CONTEXT]…`, for example
//!
//! ```text
//! NET:OPEN [MED] DENIED /usr/bin/curl(64) -> httpbin.org:443 [policy:- engine:opa] [reason:no matching policy]
//! HTTP:POST [MED] DENIED POST http://api.github.com/user/repos [policy:github_api engine:opa]
//! ```
//!
//! Only `NET:` and `HTTP:` lines whose action is `DENIED` (or `BLOCKED`) become denials; other
//! classes and actions are `Ok(None)`. A `NET:`/`HTTP:` denial that does not follow the grammar
//! is an error naming what was wrong.

use protocol::NetworkDenial;

const SEVERITIES: &[&str] = &["INFO", "LOW", "MED", "HIGH", "CRIT", "FATAL"];

/// Why a `NET:`/`HTTP:` line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable OCSF line ({reason}): {line}")]
pub struct OcsfError {
    pub reason: String,
    pub line: String,
}

fn error(line: &str, reason: impl Into<String>) -> OcsfError {
    OcsfError {
        reason: reason.into(),
        line: line.chars().take(300).collect(),
    }
}

/// Parses one shorthand line; `Ok(None)` for anything that is not a network denial.
pub fn parse_denial(line: &str, time_ms: i64) -> Result<Option<NetworkDenial>, OcsfError> {
    let line = line.trim();
    let Some((head, rest)) = line.split_once(' ') else {
        return Ok(None);
    };
    let Some((class, _activity)) = head.split_once(':') else {
        return Ok(None);
    };
    if class != "NET" && class != "HTTP" {
        return Ok(None);
    }
    let rest = rest.trim_start();
    let severity = rest
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .filter(|(s, _)| SEVERITIES.contains(s))
        .ok_or_else(|| error(line, "no [SEVERITY] after the class"))?;
    let rest = severity.1.trim_start();
    let (action, rest) = rest
        .split_once(' ')
        .ok_or_else(|| error(line, "no action after the severity"))?;
    match action {
        "DENIED" | "BLOCKED" => {}
        "ALLOWED" => return Ok(None),
        other => return Err(error(line, format!("unknown action `{other}`"))),
    }
    let (details, context) = split_context(rest.trim());
    let context = parse_context(line, context)?;
    let (binary, host, port) = if class == "NET" {
        net_details(line, details)?
    } else {
        http_details(line, details)?
    };
    let reason = context
        .iter()
        .find_map(|(k, v)| (k == "reason").then(|| v.clone()))
        .unwrap_or_else(|| match class {
            "HTTP" => "the request was denied by the network policy".to_owned(),
            _ => "the connection was denied by the network policy".to_owned(),
        });
    let rule: Vec<String> = context
        .iter()
        .filter(|(k, _)| k == "policy" || k == "engine")
        .map(|(k, v)| format!("{k}:{v}"))
        .collect();
    Ok(Some(NetworkDenial {
        host,
        port,
        binary,
        reason,
        rule: (!rule.is_empty()).then(|| rule.join(" ")),
        time_ms,
    }))
}

/// Splits `DETAILS [a] [b]` at the first ` [` that starts the trailing bracket groups.
fn split_context(text: &str) -> (&str, &str) {
    let mut at = text.len();
    // Walk back over balanced trailing groups.
    let bytes = text.as_bytes();
    let mut end = text.len();
    while end > 0 && bytes[end - 1] == b']' {
        let mut depth = 0usize;
        let mut start = None;
        for i in (0..end).rev() {
            match bytes[i] {
                b']' => depth += 1,
                b'[' => {
                    depth -= 1;
                    if depth == 0 {
                        start = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(start) = start else { break };
        at = start;
        end = text[..start].trim_end().len();
    }
    (text[..at].trim_end(), &text[at..])
}

/// `[policy:- engine:opa] [reason:no matching policy]` → key/value pairs. Inside a group,
/// `key:value` pairs are separated by spaces, except `reason`, which runs to the group's end.
fn parse_context(line: &str, context: &str) -> Result<Vec<(String, String)>, OcsfError> {
    let mut pairs = Vec::new();
    let mut rest = context.trim();
    while !rest.is_empty() {
        let inner_start = rest
            .strip_prefix('[')
            .ok_or_else(|| error(line, "context must be [key:value] groups"))?;
        let close =
            matching_close(inner_start).ok_or_else(|| error(line, "unclosed [ in the context"))?;
        let group = &inner_start[..close];
        if let Some(reason) = group.strip_prefix("reason:") {
            pairs.push(("reason".to_owned(), reason.trim().to_owned()));
        } else {
            for item in group.split_whitespace() {
                let (k, v) = item.split_once(':').ok_or_else(|| {
                    error(line, format!("context item `{item}` is not key:value"))
                })?;
                pairs.push((k.to_owned(), v.to_owned()));
            }
        }
        rest = inner_start[close + 1..].trim_start();
    }
    Ok(pairs)
}

fn matching_close(text: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `/usr/bin/curl(64) -> httpbin.org:443`.
fn net_details(line: &str, details: &str) -> Result<(Option<String>, String, u16), OcsfError> {
    let (source, destination) = details
        .rsplit_once(" -> ")
        .ok_or_else(|| error(line, "no `-> host:port` in a NET line"))?;
    let source = source.trim();
    let binary = match source.strip_suffix(')').and_then(|s| s.rsplit_once('(')) {
        Some((path, pid)) if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => path,
        _ => source,
    };
    let binary = (!binary.is_empty() && binary != "-").then(|| binary.to_owned());
    let (host, port) = host_port(line, destination.trim())?;
    Ok((binary, host, port))
}

/// `POST http://api.github.com/user/repos`: the host and port come from the URL.
fn http_details(line: &str, details: &str) -> Result<(Option<String>, String, u16), OcsfError> {
    let url = details
        .split_whitespace()
        .find(|w| w.contains("://"))
        .ok_or_else(|| error(line, "no URL in an HTTP line"))?;
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let default_port = match scheme {
        "https" | "wss" => 443,
        _ => 80,
    };
    let has_port = if authority.starts_with('[') {
        authority.contains("]:")
    } else {
        authority.contains(':')
    };
    if has_port {
        let (host, port) = host_port(line, authority)?;
        Ok((None, host, port))
    } else {
        let host = authority.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(error(line, "the URL has no host"));
        }
        Ok((None, host.to_ascii_lowercase(), default_port))
    }
}

/// `host:port` or `[v6]:port`.
fn host_port(line: &str, text: &str) -> Result<(String, u16), OcsfError> {
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, rest) = v6
            .split_once(']')
            .ok_or_else(|| error(line, "unclosed [ in an IPv6 destination"))?;
        (host, rest.strip_prefix(':').unwrap_or_default())
    } else {
        text.rsplit_once(':')
            .ok_or_else(|| error(line, format!("destination `{text}` has no port")))?
    };
    if host.is_empty() {
        return Err(error(line, "the destination has no host"));
    }
    let port: u16 = port
        .parse()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| error(line, format!("`{port}` is not a port")))?;
    Ok((host.to_ascii_lowercase(), port))
}

/// Formats a denial as the gateway does (the inverse of [`parse_denial`] for `NET:` lines).
pub fn format_net_denial(denial: &NetworkDenial, pid: u32) -> String {
    let rule = denial
        .rule
        .clone()
        .unwrap_or_else(|| "policy:- engine:opa".into());
    let host = if denial.host.contains(':') {
        format!("[{}]", denial.host)
    } else {
        denial.host.clone()
    };
    format!(
        "NET:OPEN [MED] DENIED {}({pid}) -> {host}:{} [{rule}] [reason:{}]",
        denial.binary.as_deref().unwrap_or("-"),
        denial.port,
        denial.reason
    )
}

#[cfg(test)]
#[path = "ocsf_tests.rs"]
mod tests;
