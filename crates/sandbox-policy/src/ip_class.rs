//! Which addresses a sandbox may reach after a name resolved: public unicast by default,
//! private ranges only when a rule names them, and never loopback, link-local, unspecified,
//! multicast or reserved space.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What an address is, for the allow-list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// Refused whatever the rules say (OpenShell refuses these too).
    AlwaysBlocked(&'static str),
    /// Allowed only when a rule names this address, its network, or the host explicitly.
    NonPublic(&'static str),
    /// Ordinary public unicast.
    Public,
}

/// The address as the kernel would route it: IPv4-mapped (`::ffff:a.b.c.d`) and NAT64
/// (`64:ff9b::a.b.c.d`) IPv6 addresses become the IPv4 address they carry.
pub fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match embedded_v4(v6, [0, 0, 0, 0, 0, 0xffff]) {
            Some(v4) => IpAddr::V4(v4),
            None => match embedded_v4(v6, [0x64, 0xff9b, 0, 0, 0, 0]) {
                Some(v4) => IpAddr::V4(v4),
                None => ip,
            },
        },
        IpAddr::V4(_) => ip,
    }
}

fn embedded_v4(v6: Ipv6Addr, prefix: [u16; 6]) -> Option<Ipv4Addr> {
    let segments = v6.segments();
    if segments[..6] == prefix {
        let [.., a, b, c, d] = v6.octets();
        Some(Ipv4Addr::new(a, b, c, d))
    } else {
        None
    }
}

/// Classifies an address (after [`unmap`]).
pub fn classify(ip: IpAddr) -> AddressClass {
    match unmap(ip) {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    use AddressClass::{AlwaysBlocked, NonPublic, Public};
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) => AlwaysBlocked("unspecified (0.0.0.0/8)"),
        (127, _, _) => AlwaysBlocked("loopback (127.0.0.0/8)"),
        (169, 254, _) => AlwaysBlocked("link-local (169.254.0.0/16, cloud metadata)"),
        (224..=239, _, _) => AlwaysBlocked("multicast (224.0.0.0/4)"),
        (240..=255, _, _) => AlwaysBlocked("reserved or broadcast (240.0.0.0/4)"),
        (10, _, _) => NonPublic("private (10.0.0.0/8)"),
        (172, 16..=31, _) => NonPublic("private (172.16.0.0/12)"),
        (192, 168, _) => NonPublic("private (192.168.0.0/16)"),
        (100, 64..=127, _) => NonPublic("shared address space (100.64.0.0/10, CGNAT)"),
        (192, 0, 0) => NonPublic("IETF protocol assignments (192.0.0.0/24)"),
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => NonPublic("documentation range"),
        (198, 18..=19, _) => NonPublic("benchmarking (198.18.0.0/15)"),
        (192, 88, 99) => NonPublic("6to4 relay anycast (192.88.99.0/24)"),
        _ => Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    use AddressClass::{AlwaysBlocked, NonPublic, Public};
    let segments = ip.segments();
    if ip.is_unspecified() {
        return AlwaysBlocked("unspecified (::)");
    }
    if ip.is_loopback() {
        return AlwaysBlocked("loopback (::1)");
    }
    match segments[0] {
        0xfe80..=0xfebf => AlwaysBlocked("link-local (fe80::/10)"),
        0xff00..=0xffff => AlwaysBlocked("multicast (ff00::/8)"),
        0xfc00..=0xfdff => NonPublic("unique local (fc00::/7)"),
        0xfec0..=0xfeff => NonPublic("site-local (fec0::/10, deprecated)"),
        0x2001 if segments[1] == 0x0db8 => NonPublic("documentation (2001:db8::/32)"),
        0x2001 if segments[1] == 0 => NonPublic("Teredo (2001::/32)"),
        0x2002 => {
            // 6to4 carries an IPv4 address in bits 16..48; judge that address.
            let [_, _, a, b, c, d, ..] = ip.octets();
            match classify_v4(Ipv4Addr::new(a, b, c, d)) {
                Public => Public,
                _ => NonPublic("6to4 (2002::/16) around a non-public IPv4 address"),
            }
        }
        0x0100 if segments[1..4] == [0, 0, 0] => NonPublic("discard-only (100::/64)"),
        0 => NonPublic("reserved (::/8, including IPv4-compatible addresses)"),
        _ => Public,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> AddressClass {
        classify(text.parse().unwrap())
    }

    #[test]
    fn loopback_link_local_unspecified_and_multicast_are_always_blocked() {
        for address in [
            "127.0.0.1",
            "127.255.255.254",
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::127.0.0.1",
        ] {
            assert!(
                matches!(class(address), AddressClass::AlwaysBlocked(_)),
                "{address}: {:?}",
                class(address)
            );
        }
    }

    #[test]
    fn private_and_special_ranges_are_non_public() {
        for address in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "192.0.2.10",
            "198.18.0.1",
            "fd00::1",
            "fc00::1",
            "2001:db8::1",
            "2002:0a00:0001::1",
            "::ffff:10.0.0.1",
            "::7f00:1",
        ] {
            assert!(
                matches!(class(address), AddressClass::NonPublic(_)),
                "{address}: {:?}",
                class(address)
            );
        }
    }

    #[test]
    fn ordinary_addresses_are_public() {
        for address in [
            "140.82.112.3",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:140.82.112.3",
            "2002:8c52:7003::1",
        ] {
            assert_eq!(class(address), AddressClass::Public, "{address}");
        }
    }

    #[test]
    fn mapped_addresses_unmap_to_ipv4() {
        assert_eq!(
            unmap("::ffff:127.0.0.1".parse().unwrap()),
            "127.0.0.1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            unmap("2606:4700::1111".parse().unwrap()),
            "2606:4700::1111".parse::<IpAddr>().unwrap()
        );
    }
}
