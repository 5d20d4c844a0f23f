//! Where a download may be sent on. kustomize's loader (Go's HTTP client) follows up to ten
//! redirects to any address; so does ours, with two refusals, since the URL is written by
//! whoever wrote the kustomization and the server answering it is theirs as well:
//!
//! * a download begun over https stays on https: a redirect to plain `http://` is refused;
//! * a redirect may not lead into the machine's own networks (loopback, private and link-local
//!   ranges, such as a cloud's metadata service at 169.254.169.254) unless the written URL's
//!   host is itself there (a mirror on the local network, a server on 127.0.0.1).
//!
//! The check is made on the addresses a name resolves to, by the resolver the connection then
//! uses, so a name cannot resolve one way for the check and another for the connection.
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// Whether `ip` is reachable only from within a machine or its own networks: std's
/// `IpAddr::is_global` is not stable yet, and no well-kept crate offers just this rule.
pub fn is_inward(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_inward_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_inward_v4(v4),
            None => is_inward_v6(v6),
        },
    }
}

fn is_inward_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || a == 0
        // shared address space (carrier-grade NAT), 100.64.0.0/10
        || (a == 100 && (64..128).contains(&b))
        // reserved for future use, 240.0.0.0/4
        || a >= 240
}

fn is_inward_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_unspecified()
        || ip.is_loopback()
        // unique local, fc00::/7
        || (first & 0xfe00) == 0xfc00
        // link-local, fe80::/10, and the former site-local, fec0::/10
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
}

/// The addresses of `host` a download may connect to, from `resolved`: all of them for the
/// written host, a proxy, or any host when the written host is inward itself; else the outward
/// ones, and an error when there are none.
pub fn allowed(host: &str, resolved: &[SocketAddr], written: bool, written_inward: bool) -> Result<Vec<SocketAddr>, String> {
    if written || written_inward {
        return Ok(resolved.to_vec());
    }
    let outward: Vec<SocketAddr> = resolved.iter().copied().filter(|a| !is_inward(a.ip())).collect();
    match (outward.is_empty(), resolved.first()) {
        (true, Some(first)) => Err(format!(
            "refused: a redirect to {host} ({}) leads into this machine's own network, which only a URL naming such an address may reach",
            first.ip()
        )),
        _ => Ok(outward),
    }
}

/// The resolver of one download: [`allowed`] over ureq's own resolution.
#[derive(Debug)]
pub struct RedirectGuard {
    /// The written URL's host, as `Uri::host` gives it.
    written_host: String,
    /// Whether the written host resolved to an inward address (it is resolved first).
    written_inward: AtomicBool,
}

impl RedirectGuard {
    pub fn new(url: &str) -> RedirectGuard {
        let written_host = url.parse::<Uri>().ok().and_then(|u| u.host().map(str::to_string)).unwrap_or_default();
        RedirectGuard { written_host, written_inward: AtomicBool::new(false) }
    }
}

impl Resolver for RedirectGuard {
    fn resolve(&self, uri: &Uri, config: &Config, timeout: NextTimeout) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let resolved = DefaultResolver::default().resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default();
        let written = host.eq_ignore_ascii_case(&self.written_host);
        if written {
            self.written_inward.fetch_or(resolved.iter().any(|a| is_inward(a.ip())), Ordering::SeqCst);
        }
        let proxy = config.proxy().is_some_and(|p| p.host().eq_ignore_ascii_case(host));
        let allowed = allowed(host, &resolved, written || proxy, self.written_inward.load(Ordering::SeqCst)).map_err(|e| ureq::Error::Other(e.into()))?;
        let mut out = self.empty();
        for address in allowed {
            out.push(address);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn inward_addresses_are_the_machine_and_its_own_networks() {
        for inward in [
            "127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1",
            "100.127.255.255", "255.255.255.255", "240.0.0.1", "::1", "::", "fd00::1", "fc00::1", "fe80::1", "fec0::1", "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(is_inward(ip(inward)), "{inward} is inward");
        }
        for outward in ["8.8.8.8", "140.82.112.3", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2606:4700::1", "::ffff:8.8.8.8", "169.255.0.1"] {
            assert!(!is_inward(ip(outward)), "{outward} is outward");
        }
    }

    fn at(text: &str) -> SocketAddr {
        SocketAddr::new(ip(text), 443)
    }

    #[test]
    fn a_redirect_reaches_inward_only_from_an_inward_written_host() {
        let metadata = [at("169.254.169.254")];
        // A redirect from a public host into the machine's network is refused, naming both.
        let refused = allowed("metadata.internal", &metadata, false, false).unwrap_err();
        assert!(refused.contains("metadata.internal (169.254.169.254)") && refused.starts_with("refused: "), "{refused}");
        // The written host itself goes wherever it resolves; so does a redirect from an inward one.
        assert_eq!(allowed("mirror.lan", &[at("10.0.0.5")], true, false).unwrap(), [at("10.0.0.5")]);
        assert_eq!(allowed("blobs.lan", &[at("10.0.0.6")], false, true).unwrap(), [at("10.0.0.6")]);
        // Of a name resolving both ways, only its outward addresses are kept.
        assert_eq!(allowed("mixed.example", &[at("127.0.0.1"), at("140.82.112.3")], false, false).unwrap(), [at("140.82.112.3")]);
        assert_eq!(allowed("cdn.example", &[at("140.82.112.3")], false, false).unwrap(), [at("140.82.112.3")]);
    }

    #[test]
    fn the_guard_knows_the_written_host_as_uri_gives_it() {
        assert_eq!(RedirectGuard::new("https://Raw.Example.com:8443/a/b.yaml").written_host, "Raw.Example.com");
        assert_eq!(RedirectGuard::new("http://[::1]:8080/x.yaml").written_host, "[::1]");
        assert_eq!(RedirectGuard::new("http://127.0.0.1:1/x.yaml").written_host, "127.0.0.1");
    }
}
