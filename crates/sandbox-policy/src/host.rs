//! Hosts as the policy and the allow-list see them: normalised names, IP literals, CIDRs, and
//! host rules (`host[:port]`, `*.example.com:443`, `10.0.0.0/8:443`, `[2001:db8::1]:443`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::PolicyError;

/// The port a host rule gets when none is written.
pub const DEFAULT_PORT: u16 = 443;

/// How a host's traffic leaves the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Transport {
    /// Through OpenShell's HTTP CONNECT proxy (programs must honour `HTTPS_PROXY`).
    #[default]
    Proxy,
    /// Native TCP with policy DNS (OpenShell `protocol: tcp`; Docker and Podman drivers only).
    /// Needed by programs that ignore proxies, such as ssh.
    Tcp,
}

/// A host name or IP literal after normalisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NormalHost {
    /// Lower-case ASCII DNS name without a trailing dot.
    Name(String),
    /// An IP literal (IPv4 dotted quad, or IPv6 with or without brackets).
    Ip(IpAddr),
}

/// Normalises a host as a client wrote it: lower case, one trailing dot dropped, brackets
/// around IPv6 removed. Refuses, with a reason, anything that is not a plain DNS name or a
/// canonical IP literal: non-ASCII (IDNA is not supported), numeric forms other than the
/// dotted quad (`2130706433`, `0177.0.0.1`, `127.1`, `0x7f.0.0.1`), IPv6 zone ids, bad labels.
pub fn normalize_host(raw: &str) -> Result<NormalHost, String> {
    if raw.is_empty() {
        return Err("is empty".into());
    }
    if !raw.is_ascii() {
        return Err("is not ASCII: internationalised names are not supported, \
                    write the punycode (xn--) form"
            .into());
    }
    if let Some(inner) = raw.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or("has an opening bracket without a closing one")?;
        return inner
            .parse::<Ipv6Addr>()
            .map(|ip| NormalHost::Ip(IpAddr::V6(ip)))
            .map_err(|_| "is not a valid bracketed IPv6 address (zone ids are refused)".into());
    }
    if raw.contains(':') {
        return raw
            .parse::<Ipv6Addr>()
            .map(|ip| NormalHost::Ip(IpAddr::V6(ip)))
            .map_err(|_| "contains `:` but is not an IPv6 address".into());
    }
    let lower = raw.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if name.is_empty() || name.ends_with('.') {
        return Err("has an empty label".into());
    }
    if let Ok(ip) = name.parse::<Ipv4Addr>() {
        return Ok(NormalHost::Ip(IpAddr::V4(ip)));
    }
    // Browsers and libc resolvers read a host whose last label is numeric as an IPv4 address
    // in decimal, octal or hex. Only the canonical dotted quad is accepted (handled above).
    let last = name.rsplit('.').next().unwrap_or(name);
    let numeric = !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit());
    let hex = last.starts_with("0x")
        && last.len() > 2
        && last[2..].bytes().all(|b| b.is_ascii_hexdigit());
    if numeric || hex || (last == "0x") {
        return Err("is a non-canonical IP address form; write the dotted quad".into());
    }
    check_dns_name(name)?;
    Ok(NormalHost::Name(name.to_owned()))
}

/// A DNS name of letters, digits and hyphens: labels of 1 to 63 characters that neither start
/// nor end with a hyphen, 253 characters in all.
fn check_dns_name(name: &str) -> Result<(), String> {
    if name.len() > 253 {
        return Err("is longer than 253 characters".into());
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err("has an empty label".into());
        }
        if label.len() > 63 {
            return Err(format!("has a label longer than 63 characters (`{label}`)"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(format!(
                "has a label with characters other than letters, digits and `-` (`{label}`)"
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!(
                "has a label starting or ending with `-` (`{label}`)"
            ));
        }
    }
    Ok(())
}

/// An IP network: an address and a prefix length, with no host bits set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cidr {
    address: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `a.b.c.d/n`, `x::/n`, or a bare address (a single-address network).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address
            .parse()
            .map_err(|_| "the address is not a canonical IPv4 or IPv6 address".to_owned())?;
        let max = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max && prefix.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| format!("the prefix length must be a number from 0 to {max}"))?,
        };
        let cidr = Self { address, prefix };
        if cidr.network_bits() != bits(address) {
            return Err(format!(
                "host bits are set (did you mean {}/{prefix}?)",
                from_bits(address.is_ipv4(), cidr.network_bits())
            ));
        }
        Ok(cidr)
    }

    pub fn address(&self) -> IpAddr {
        self.address
    }

    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    fn width(&self) -> u8 {
        if self.address.is_ipv4() { 32 } else { 128 }
    }

    fn mask(&self) -> u128 {
        let width = u32::from(self.width());
        let prefix = u32::from(self.prefix);
        if prefix == 0 {
            0
        } else {
            let ones = u128::MAX << (128 - prefix);
            ones >> (128 - width)
        }
    }

    fn network_bits(&self) -> u128 {
        bits(self.address) & self.mask()
    }

    /// Whether `ip` is inside this network (same address family only).
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.address.is_ipv4() && bits(ip) & self.mask() == self.network_bits()
    }

    /// Whether the two networks share at least one address.
    pub fn overlaps(&self, other: &Cidr) -> bool {
        self.contains(other.address) || other.contains(self.address)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.address, self.prefix)
    }
}

fn bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn from_bits(v4: bool, value: u128) -> IpAddr {
    if v4 {
        IpAddr::V4(Ipv4Addr::from(u32::try_from(value).unwrap_or(u32::MAX)))
    } else {
        IpAddr::V6(Ipv6Addr::from(value))
    }
}

/// What a host rule matches.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostPattern {
    /// One exact DNS name.
    Exact(String),
    /// `*.suffix`: exactly one label in front of `suffix`.
    OneLabel(String),
    /// `**.suffix`: one or more labels in front of `suffix`.
    AnyLabels(String),
    /// Any destination inside these addresses (an OpenShell hostless `allowed_ips` endpoint).
    Addresses(Cidr),
}

impl HostPattern {
    /// Whether the (normalised) name matches.
    pub fn matches_name(&self, name: &str) -> bool {
        match self {
            HostPattern::Exact(exact) => exact == name,
            HostPattern::OneLabel(suffix) => name
                .strip_suffix(suffix.as_str())
                .and_then(|front| front.strip_suffix('.'))
                .is_some_and(|front| !front.is_empty() && !front.contains('.')),
            HostPattern::AnyLabels(suffix) => name
                .strip_suffix(suffix.as_str())
                .and_then(|front| front.strip_suffix('.'))
                .is_some_and(|front| !front.is_empty()),
            HostPattern::Addresses(_) => false,
        }
    }

    /// The text OpenShell's `host` field takes (empty for address rules).
    pub fn host_field(&self) -> String {
        match self {
            HostPattern::Exact(name) => name.clone(),
            HostPattern::OneLabel(suffix) => format!("*.{suffix}"),
            HostPattern::AnyLabels(suffix) => format!("**.{suffix}"),
            HostPattern::Addresses(_) => String::new(),
        }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostPattern::Addresses(cidr) if cidr.prefix() == cidr.width() => match cidr.address {
                IpAddr::V4(v4) => write!(f, "{v4}"),
                IpAddr::V6(v6) => write!(f, "[{v6}]"),
            },
            HostPattern::Addresses(cidr) if cidr.address.is_ipv6() => write!(f, "[{cidr}]"),
            HostPattern::Addresses(cidr) => write!(f, "{cidr}"),
            other => f.write_str(&other.host_field()),
        }
    }
}

/// One allowed destination: a host pattern, a port and a transport.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostRule {
    pub pattern: HostPattern,
    pub port: u16,
    pub transport: Transport,
}

impl HostRule {
    /// Parses `host`, `host:port`, `*.suffix[:port]`, `**.suffix[:port]`, an IPv4 address or
    /// CIDR with optional `:port`, or a bracketed IPv6 address or CIDR with optional `:port`.
    /// The port defaults to 443; the transport is the proxy.
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        Self::parse_in("host", text)
    }

    /// Like [`HostRule::parse`]; errors name `field`.
    pub fn parse_in(field: &str, text: &str) -> Result<Self, PolicyError> {
        if text.contains("://") {
            return Err(PolicyError::host(
                field,
                text,
                "is a URL; write the host (and `:port`) only, like `example.com:8443`",
            ));
        }
        let (host, port) = split_port(field, text)?;
        let pattern = parse_pattern(field, host)?;
        Ok(Self {
            pattern,
            port,
            transport: Transport::Proxy,
        })
    }

    /// The same rule over another transport.
    pub fn with_transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }
}

impl fmt::Display for HostRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.pattern, self.port)?;
        if self.transport == Transport::Tcp {
            f.write_str(" (tcp)")?;
        }
        Ok(())
    }
}

fn split_port<'t>(field: &str, text: &'t str) -> Result<(&'t str, u16), PolicyError> {
    let parse_port = |port: &str| -> Result<u16, PolicyError> {
        let invalid = |reason: &str| PolicyError::InvalidPort {
            field: field.to_owned(),
            value: port.to_owned(),
            reason: reason.to_owned(),
        };
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid("write a number from 1 to 65535"));
        }
        match port.parse::<u16>() {
            Ok(0) | Err(_) => Err(invalid("must be from 1 to 65535")),
            Ok(port) => Ok(port),
        }
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (inner, after) = rest
            .split_once(']')
            .ok_or_else(|| PolicyError::host(field, text, "has `[` without `]`"))?;
        return match after {
            "" => Ok((inner, DEFAULT_PORT)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((inner, parse_port(port)?)),
                None => Err(PolicyError::host(field, text, "has text after `]`")),
            },
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, DEFAULT_PORT)),
        1 => {
            let (host, port) = text.split_once(':').unwrap_or((text, ""));
            Ok((host, parse_port(port)?))
        }
        _ => Ok((text, DEFAULT_PORT)), // an unbracketed IPv6 address or network, no port
    }
}

fn parse_pattern(field: &str, host: &str) -> Result<HostPattern, PolicyError> {
    if host.contains('/') || host.contains(':') {
        return Cidr::parse(host)
            .map(HostPattern::Addresses)
            .map_err(|reason| PolicyError::InvalidAllowedIp {
                field: field.to_owned(),
                value: host.to_owned(),
                reason,
            });
    }
    if let Some(suffix) = host.strip_prefix("**.") {
        return wildcard_suffix(field, host, suffix).map(HostPattern::AnyLabels);
    }
    if let Some(suffix) = host.strip_prefix("*.") {
        return wildcard_suffix(field, host, suffix).map(HostPattern::OneLabel);
    }
    if host.contains('*') {
        return Err(PolicyError::host(
            field,
            host,
            "may use `*` or `**` only as the whole first label (`*.example.com`)",
        ));
    }
    match normalize_host(host).map_err(|reason| PolicyError::host(field, host, reason))? {
        NormalHost::Name(name) => Ok(HostPattern::Exact(name)),
        NormalHost::Ip(ip) => Ok(HostPattern::Addresses(Cidr {
            address: ip,
            prefix: if ip.is_ipv4() { 32 } else { 128 },
        })),
    }
}

/// A wildcard's suffix must be a DNS name of at least two labels (no `*.com`: a TLD wildcard).
fn wildcard_suffix(field: &str, host: &str, suffix: &str) -> Result<String, PolicyError> {
    if suffix.contains('*') {
        return Err(PolicyError::host(
            field,
            host,
            "may use `*` or `**` only as the whole first label",
        ));
    }
    match normalize_host(suffix).map_err(|reason| PolicyError::host(field, host, reason))? {
        NormalHost::Name(name) if name.contains('.') => Ok(name),
        NormalHost::Name(_) => Err(PolicyError::host(
            field,
            host,
            "is a top-level-domain wildcard; a wildcard needs at least three labels",
        )),
        NormalHost::Ip(_) => Err(PolicyError::host(
            field,
            host,
            "wildcards apply to names, not addresses",
        )),
    }
}

#[cfg(test)]
#[path = "host_tests.rs"]
mod tests;
