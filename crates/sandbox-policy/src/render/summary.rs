//! One paragraph for people: what the sandbox can read, write and reach.

use protocol::FolderAccess;

use super::SessionSpec;
use super::folders::Layout;
use crate::allow_list::{NetworkAllowList, RuleOrigin};
use crate::host::Transport;
use crate::secrets::ProviderRequest;

fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

pub(crate) fn write(
    spec: &SessionSpec,
    layout: &Layout,
    allow_list: &NetworkAllowList,
    providers: &[ProviderRequest],
) -> String {
    let mut sentences = Vec::new();
    sentences.push(format!(
        "This sandbox runs as user {} (group {}) under Landlock, which it requires.",
        layout.owner.uid, layout.owner.gid
    ));

    let pick = |access: FolderAccess| -> Vec<String> {
        layout
            .folders
            .iter()
            .filter(|(_, a)| *a == access)
            .map(|(path, _)| path.clone())
            .collect()
    };
    let writable = pick(FolderAccess::ReadWrite);
    let readable = pick(FolderAccess::ReadOnly);
    let mut files = Vec::new();
    if !writable.is_empty() {
        files.push(format!("read and write {}", join(&writable)));
    }
    if !readable.is_empty() {
        files.push(format!("only read {}", join(&readable)));
    }
    sentences.push(format!(
        "It can {}; of the rest of this machine it sees nothing but the system folders of its \
         image (read-only), its own temporary folder and Paddock's tool runner (read-only).",
        files.join(", and ")
    ));
    let protected = layout.protected.iter().filter(|(_, ro)| *ro).count();
    if protected > 0 {
        sentences.push(format!(
            "Inside its read-write folders, {protected} files and folders the host runs later \
             (git configuration and hooks, shell and editor settings) are read-only."
        ));
    }
    if let Some(home) = &layout.private_home {
        let names: Vec<String> = spec.credentials.iter().map(|e| e.name.clone()).collect();
        sentences.push(format!(
            "Copies of your {} credentials sit in a private home ({home}) that is deleted \
             with the sandbox.",
            join(&names)
        ));
    }

    let mut reach = Vec::new();
    for rule in allow_list.rules() {
        let mut hosts: Vec<String> = rule
            .endpoints
            .iter()
            .map(|e| {
                let mut shown = format!("{}:{}", e.host.pattern, e.host.port);
                if e.host.transport == Transport::Tcp {
                    shown.push_str(" (direct TCP)");
                }
                shown
            })
            .collect();
        hosts.dedup();
        let what = match rule.origin {
            RuleOrigin::Profile => format!("for the {}", rule.display),
            RuleOrigin::Extra => "added for this session".to_owned(),
            RuleOrigin::Credential => format!("for the {}", rule.display),
            RuleOrigin::Secret => format!("for the {}", rule.display),
        };
        reach.push(format!("{} {what}", join(&hosts)));
    }
    if let Some(open) = allow_list.open_addresses() {
        let ports: Vec<String> = open.ports.iter().map(u16::to_string).collect();
        reach.push(format!(
            "any public IPv4 address on port {} (open profile), but no private, loopback or \
             link-local address",
            join(&ports)
        ));
    }
    if reach.is_empty() {
        sentences.push("It can reach no network destination.".to_owned());
    } else {
        sentences.push(format!(
            "It can reach {}; every other destination is refused.",
            reach.join("; ")
        ));
    }
    if !providers.is_empty() {
        let names: Vec<String> = providers.iter().map(|p| p.variable.clone()).collect();
        sentences.push(format!(
            "The secret{} {} can be used on {} hosts only and never read inside: the sandbox \
             holds placeholders.",
            if names.len() == 1 { "" } else { "s" },
            join(&names),
            if names.len() == 1 { "its" } else { "their" }
        ));
    }
    sentences.join(" ")
}
