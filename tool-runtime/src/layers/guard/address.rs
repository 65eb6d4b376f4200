//! Which IP addresses a tool may not reach: every range that is not the public internet.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Addresses that serve cloud instance metadata (credentials, user data): AWS, GCP, Azure and
/// OpenStack at 169.254.169.254, AWS ECS task metadata at 169.254.170.2, Alibaba at
/// 100.100.100.200, Oracle at 192.0.0.192.
const METADATA_V4: [Ipv4Addr; 4] = [
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(169, 254, 170, 2),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(192, 0, 0, 192),
];

/// AWS's instance metadata over IPv6.
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// The rule that forbids reaching `ip`, or `None` for a public address.
///
/// Refused: loopback, private (RFC 1918), link-local, shared address space (100.64.0.0/10,
/// carrier-grade NAT), "this network" (0.0.0.0/8), multicast, broadcast, reserved and
/// documentation ranges, the benchmarking range, and cloud metadata addresses; in IPv6 also
/// unique-local (fc00::/7), site-local (fec0::/10), IPv4-mapped and IPv4-compatible addresses
/// (whatever IPv4 address they carry), and Teredo; NAT64 and 6to4 addresses are judged by the
/// IPv4 address they embed.
///
/// ```
/// use tool_runtime::layers::guard::address_rule;
///
/// assert_eq!(address_rule("10.1.2.3".parse().unwrap()), Some("private"));
/// assert_eq!(address_rule("::ffff:8.8.8.8".parse().unwrap()), Some("ipv4_mapped"));
/// assert_eq!(address_rule("93.184.215.14".parse().unwrap()), None);
/// ```
#[must_use]
pub fn address_rule(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_rule(v4),
        IpAddr::V6(v6) => v6_rule(v6),
    }
}

fn v4_rule(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(if METADATA_V4.contains(&ip) {
        "cloud_metadata"
    } else if a == 0 {
        "unspecified"
    } else if ip.is_loopback() {
        "loopback"
    } else if ip.is_private() {
        "private"
    } else if ip.is_link_local() {
        "link_local"
    } else if a == 100 && b & 0xc0 == 64 {
        "shared_address_space"
    } else if ip.is_broadcast() {
        "broadcast"
    } else if ip.is_multicast() {
        "multicast"
    } else if a >= 240 || (a, b, c) == (192, 0, 0) {
        "reserved"
    } else if ip.is_documentation() {
        "documentation"
    } else if a == 198 && b & 0xfe == 18 {
        "benchmarking"
    } else {
        return None;
    })
}

fn v6_rule(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    Some(if ip == METADATA_V6 {
        "cloud_metadata"
    } else if ip.is_unspecified() {
        "unspecified"
    } else if ip.is_loopback() {
        "loopback"
    } else if ip.to_ipv4_mapped().is_some() {
        "ipv4_mapped"
    } else if s[..6] == [0; 6] {
        "ipv4_compatible"
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64: the IPv4 address it reaches is the last 32 bits.
        return v4_rule(embedded(s[6], s[7]));
    } else if s[0] == 0x2002 {
        // 6to4: the IPv4 address of the relay is bits 16..48.
        return v4_rule(embedded(s[1], s[2]));
    } else if s[0] == 0x2001 && s[1] == 0 {
        "teredo"
    } else if s[0] & 0xfe00 == 0xfc00 {
        "unique_local"
    } else if s[0] & 0xffc0 == 0xfe80 {
        "link_local"
    } else if s[0] & 0xffc0 == 0xfec0 {
        "site_local"
    } else if s[0] & 0xff00 == 0xff00 {
        "multicast"
    } else if (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && s[1] & 0xf000 == 0) {
        "documentation"
    } else if s[..4] == [0x0100, 0, 0, 0] {
        "reserved"
    } else {
        return None;
    })
}
