//! Where a customer user's store or warehouse may point (CONTRACT §6): the operator's own
//! network is not the tenants' to reach. This module owns the policy (whose address may
//! point where), the sorting of addresses into public and special-purpose, and the
//! connections made under the policy: a name is resolved once, every address it resolves to
//! is checked, and the connection goes to a checked address; nothing resolves the name a
//! second time, which is what DNS rebinding would need.
//!
//! Which addresses are refused: every block of IANA's IPv4 and IPv6 Special-Purpose Address
//! Space registries (the RFC 6890 tables, as the `iprfc` crate snapshots them), and two
//! more that those registries leave to others: IPv4 multicast 224.0.0.0/4 (IANA's IPv4
//! Multicast Address Space registry) and, for IPv6, anything outside global unicast
//! 2000::/3 (IANA's IPv6 Address Space registry: multicast, site-local, IPv4-compatible).
//! An IPv4-mapped address (`::ffff:a.b.c.d`) and one under the NAT64 well-known prefix
//! (`64:ff9b::/96`, RFC 6052) are judged by the IPv4 address they carry. Names are
//! resolved by the system's resolver, but `localhost` and its kin are refused by name, so
//! the answer never depends on a hosts file.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use iprfc::Ipv6Net;
use tokio::net::TcpStream;

/// How far a connection made for a store or warehouse may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reach {
    /// Wherever the address points: an admin set it, or `tenant_private_targets` is on.
    #[default]
    Anywhere,
    /// Only to public addresses: a customer user set it (or asks for a ping).
    PublicOnly,
}

impl Reach {
    /// For an address a user gives now (a create, a PATCH of the adapter, a ping).
    pub fn for_user(is_admin: bool, tenant_private_targets: bool) -> Reach {
        Reach::for_row(SetBy::of_user(is_admin), tenant_private_targets)
    }

    /// For a stored row, by who set its address; the configuration is read at connect time,
    /// so turning `tenant_private_targets` off holds for rows saved while it was on.
    pub fn for_row(set_by: SetBy, tenant_private_targets: bool) -> Reach {
        match set_by {
            SetBy::Customer if !tenant_private_targets => Reach::PublicOnly,
            _ => Reach::Anywhere,
        }
    }
}

/// Who last wrote a store's or warehouse's adapter, and so set its address
/// (`address_set_by`: `admin` or `customer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetBy {
    Admin,
    Customer,
}

impl SetBy {
    pub fn of_user(is_admin: bool) -> SetBy {
        if is_admin { SetBy::Admin } else { SetBy::Customer }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SetBy::Admin => "admin",
            SetBy::Customer => "customer",
        }
    }
}

impl rusqlite::types::ToSql for SetBy {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for SetBy {
    /// Anything but `admin` reads as a customer's: an unknown value is checked, not trusted.
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        Ok(if value.as_str()? == "admin" { SetBy::Admin } else { SetBy::Customer })
    }
}

/// Why an address may not be used: the host as given and what it is. Its text never names
/// an address a name resolved to, so a tenant cannot use the check to read the operator's DNS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    host: String,
    kind: &'static str,
    resolved: bool,
}

impl Refused {
    /// What the address is ("a loopback address").
    pub fn kind(&self) -> &'static str {
        self.kind
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = if self.resolved { "resolves to" } else { "is" };
        write!(f, "the host {} {verb} {}", self.host, self.kind)
    }
}

impl std::error::Error for Refused {}

/// The refusal inside an error that [`connect`] returned, if that is why it failed.
pub fn refusal(error: &io::Error) -> Option<&Refused> {
    error.get_ref()?.downcast_ref::<Refused>()
}

/// What `ip` is when it is not a public address (`"a private address"`); `None` when public.
pub fn special(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return special_v4(v4);
            }
            if NAT64_WELL_KNOWN.contains(&v6) {
                let [.., a, b, c, d] = v6.octets();
                return special_v4(Ipv4Addr::new(a, b, c, d));
            }
            special_v6(v6)
        }
    }
}

/// RFC 6052 §2.1: IPv4 addresses translated by NAT64, the IPv4 address in the last 32 bits.
const NAT64_WELL_KNOWN: Ipv6Net = Ipv6Net::new_assert(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96);

/// IANA IPv6 Address Space registry: 2000::/3 is the only block allocated as global unicast.
const GLOBAL_UNICAST: Ipv6Net = Ipv6Net::new_assert(Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    use iprfc::*;
    let kind = if is_loopback_ipv4_addr(ip) {
        "a loopback address"
    } else if is_private_ipv4_addr(ip) {
        "a private address"
    } else if is_link_local_ipv4_addr(ip) {
        "a link-local address"
    } else if is_unspecified_ipv4_addr(ip) {
        "the unspecified address"
    } else if is_shared_ipv4_addr(ip) {
        "a shared (carrier-grade NAT) address"
    } else if is_multicast_ipv4_addr(ip) {
        "a multicast address"
    } else if is_broadcast_ipv4_addr(ip) {
        "the broadcast address"
    } else if RFC6890.contains(&ip) {
        "a special-purpose address"
    } else {
        return None;
    };
    Some(kind)
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    use iprfc::*;
    let kind = if is_loopback_ipv6_addr(ip) {
        "a loopback address"
    } else if is_unspecified_ipv6_addr(ip) {
        "the unspecified address"
    } else if is_unique_local_ipv6_addr(ip) {
        "a private (unique local) address"
    } else if is_link_local_ipv6_addr(ip) {
        "a link-local address"
    } else if is_multicast_ipv6_addr(ip) {
        "a multicast address"
    } else if RFC6890.contains(&ip) || !GLOBAL_UNICAST.contains(&ip) {
        "a special-purpose address"
    } else {
        return None;
    };
    Some(kind)
}

/// Names that mean this machine whatever a resolver says: `localhost` and its subdomains
/// (RFC 6761 §6.3), and the loopback names Linux hosts files carry.
fn is_loopback_name(host: &str) -> bool {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || matches!(name.as_str(), "localhost.localdomain" | "ip6-localhost" | "ip6-loopback")
}

/// The IP address `host` spells, in any form a resolver reads as one: the usual forms, IPv6
/// in brackets, and the old IPv4 shorthands (`127.1`, `0x7f.1`, `2130706433`) that
/// `inet_aton` and URL parsers accept.
fn literal(host: &str) -> Option<IpAddr> {
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if let Ok(ip) = bare.parse() {
        return Some(ip);
    }
    match url::Host::parse(host) {
        Ok(url::Host::Ipv4(ip)) => Some(ip.into()),
        Ok(url::Host::Ipv6(ip)) => Some(ip.into()),
        _ => None,
    }
}

/// Resolves a name to socket addresses; the system's resolver, or a stand-in in tests.
pub(crate) trait Lookup: Send + Sync {
    fn lookup(&self, host: &str, port: u16) -> impl Future<Output = io::Result<Vec<SocketAddr>>> + Send;
}

/// The system's resolver (getaddrinfo, off the async threads).
struct System;

impl Lookup for System {
    fn lookup(&self, host: &str, port: u16) -> impl Future<Output = io::Result<Vec<SocketAddr>>> + Send {
        let host = host.to_string();
        async move { Ok(tokio::net::lookup_host((host.as_str(), port)).await?.collect()) }
    }
}

/// Why [`public_addresses`] has none to give.
enum NoAddress {
    Refused(Refused),
    Failed(io::Error),
}

impl From<NoAddress> for io::Error {
    fn from(e: NoAddress) -> io::Error {
        match e {
            NoAddress::Refused(refused) => io::Error::new(io::ErrorKind::PermissionDenied, refused),
            NoAddress::Failed(e) => e,
        }
    }
}

/// The addresses `host:port` may be connected at under `PublicOnly`: a literal as it is, a
/// name resolved once; refused when any of them is not public.
async fn public_addresses(lookup: &impl Lookup, host: &str, port: u16) -> Result<Vec<SocketAddr>, NoAddress> {
    let refuse = |kind, resolved| NoAddress::Refused(Refused { host: host.to_string(), kind, resolved });
    if is_loopback_name(host) {
        return Err(refuse("a loopback address", true));
    }
    if let Some(ip) = literal(host) {
        return match special(ip) {
            Some(kind) => Err(refuse(kind, false)),
            None => Ok(vec![SocketAddr::new(ip, port)]),
        };
    }
    let found = lookup.lookup(host, port).await.map_err(NoAddress::Failed)?;
    if found.is_empty() {
        return Err(NoAddress::Failed(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the host {host} resolves to no address"),
        )));
    }
    // Every address: a resolver may hand out a public one first and a private one after.
    if let Some(kind) = found.iter().find_map(|a| special(a.ip())) {
        return Err(refuse(kind, true));
    }
    Ok(found)
}

/// Opens a TCP connection to `host:port` under `reach`. Under `PublicOnly` the name is
/// resolved once and the connection goes to one of the addresses just checked; a refusal is
/// an error of kind `PermissionDenied` that [`refusal`] finds, and nothing is connected to.
pub async fn connect(host: &str, port: u16, reach: Reach) -> io::Result<TcpStream> {
    connect_with(&System, host, port, reach).await
}

async fn connect_with(lookup: &impl Lookup, host: &str, port: u16, reach: Reach) -> io::Result<TcpStream> {
    if reach == Reach::Anywhere {
        return TcpStream::connect((host, port)).await;
    }
    let mut last = None;
    for address in public_addresses(lookup, host, port).await? {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address to connect to")))
}

/// How long a check made while saving waits for the resolver.
const CHECK_LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// The check made when a customer user saves or pings a store or warehouse: whether `host`
/// is, or now resolves to, an address `reach` refuses. A name that does not resolve (or not
/// in time) passes: it reaches nothing now, and every connection made for the row is checked
/// again.
pub async fn check_host(host: &str, port: u16, reach: Reach) -> Result<(), Refused> {
    check_host_with(&System, host, port, reach).await
}

async fn check_host_with(lookup: &impl Lookup, host: &str, port: u16, reach: Reach) -> Result<(), Refused> {
    if reach == Reach::Anywhere {
        return Ok(());
    }
    match tokio::time::timeout(CHECK_LOOKUP_TIMEOUT, public_addresses(lookup, host, port)).await {
        Ok(Err(NoAddress::Refused(refused))) => Err(refused),
        _ => Ok(()),
    }
}

/// The network address a store's or warehouse's adapter names: its host and port, and the
/// field to name in a 422.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub field: &'static str,
    pub host: String,
    pub port: u16,
}

impl Address {
    /// The host and port of a URL field (a store platform's own address, such as
    /// WooCommerce's `adapter[url]`): the port the URL gives or its scheme's. `None` when the
    /// URL has no host, which the field's own validation reports.
    pub fn of_url(field: &'static str, url: &str) -> Option<Address> {
        let url = url::Url::parse(url).ok()?;
        let host = match url.host()? {
            url::Host::Domain(name) => name.to_string(),
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        };
        Some(Address { field, host, port: url.port_or_known_default()? })
    }

    /// The check made while saving or pinging (see [`check_host`]); the problem is a phrase for
    /// the field's 422 detail.
    pub async fn check(&self, reach: Reach) -> Result<(), String> {
        check_host(&self.host, self.port, reach).await.map_err(|refused| {
            format!(
                "{refused}; a customer user's store or warehouse may point only at public internet addresses"
            )
        })
    }
}

/// The HTTP client for a request to `url` under `reach`. Under `PublicOnly` its resolver
/// refuses names that resolve to addresses that are not public, and it uses no proxy (a
/// proxy would resolve the name itself, beyond this check). A URL whose host is an IP
/// address never reaches a resolver, so it is checked here. A refusal is an error that
/// [`refusal`] finds, as for [`connect`].
pub fn http_client(url: &reqwest::Url, reach: Reach) -> io::Result<&'static reqwest::Client> {
    if reach == Reach::Anywhere {
        return Ok(super::http::client());
    }
    let host = url.host_str().unwrap_or_default();
    let refuse = |kind, resolved| {
        io::Error::from(NoAddress::Refused(Refused { host: host.to_string(), kind, resolved }))
    };
    if is_loopback_name(host) {
        return Err(refuse("a loopback address", true));
    }
    if let Some(kind) = literal(host).and_then(special) {
        return Err(refuse(kind, false));
    }
    static PUBLIC_ONLY: OnceLock<Option<reqwest::Client>> = OnceLock::new();
    PUBLIC_ONLY
        .get_or_init(|| public_only_client(System))
        .as_ref()
        .ok_or_else(|| io::Error::other("the HTTP client for customer users' addresses could not start"))
}

/// `None` only when TLS cannot start; there is no unchecked fallback.
fn public_only_client(lookup: impl Lookup + 'static) -> Option<reqwest::Client> {
    super::http::builder().no_proxy().dns_resolver(Arc::new(PublicResolver(Arc::new(lookup)))).build().ok()
}

/// reqwest's resolver under `PublicOnly`: the name resolved once and checked, and reqwest
/// connects to those very addresses.
struct PublicResolver<L>(Arc<L>);

impl<L: Lookup + 'static> reqwest::dns::Resolve for PublicResolver<L> {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let (lookup, name) = (Arc::clone(&self.0), name.as_str().to_string());
        // reqwest puts the URL's port (or the scheme's) in place of the 0.
        Box::pin(async move {
            let found = public_addresses(lookup.as_ref(), &name, 0).await.map_err(io::Error::from)?;
            Ok(Box::new(found.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
