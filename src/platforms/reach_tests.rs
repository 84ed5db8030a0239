//! Tests of `reach`.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

#[test]
fn every_special_purpose_range_is_refused_in_both_families() {
    let refused = [
        ("127.0.0.1", "a loopback address"),
        ("127.255.255.254", "a loopback address"),
        ("10.0.0.1", "a private address"),
        ("10.255.255.255", "a private address"),
        ("172.16.0.1", "a private address"),
        ("172.31.255.255", "a private address"),
        ("192.168.1.1", "a private address"),
        ("169.254.169.254", "a link-local address"),
        ("169.254.0.1", "a link-local address"),
        ("100.64.0.1", "a shared (carrier-grade NAT) address"),
        ("100.127.255.255", "a shared (carrier-grade NAT) address"),
        ("0.0.0.0", "the unspecified address"),
        ("0.1.2.3", "a special-purpose address"),
        ("192.0.0.1", "a special-purpose address"),
        ("192.0.0.170", "a special-purpose address"),
        ("192.0.2.1", "a special-purpose address"),
        ("192.88.99.1", "a special-purpose address"),
        ("198.18.0.1", "a special-purpose address"),
        ("198.19.255.255", "a special-purpose address"),
        ("198.51.100.7", "a special-purpose address"),
        ("203.0.113.9", "a special-purpose address"),
        ("224.0.0.1", "a multicast address"),
        ("239.255.255.255", "a multicast address"),
        ("240.0.0.1", "a special-purpose address"),
        ("255.255.255.255", "the broadcast address"),
        ("::1", "a loopback address"),
        ("::", "the unspecified address"),
        ("fc00::1", "a private (unique local) address"),
        ("fd12:3456:789a::1", "a private (unique local) address"),
        ("fe80::1", "a link-local address"),
        ("febf:ffff::1", "a link-local address"),
        ("fec0::1", "a special-purpose address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("::ffff:10.0.0.1", "a private address"),
        ("::ffff:169.254.169.254", "a link-local address"),
        ("::127.0.0.1", "a special-purpose address"),
        ("::10.0.0.1", "a special-purpose address"),
        ("64:ff9b::a00:1", "a private address"),
        ("64:ff9b::7f00:1", "a loopback address"),
        ("64:ff9b::a9fe:a9fe", "a link-local address"),
        ("64:ff9b:1::a00:1", "a special-purpose address"),
        ("100::1", "a special-purpose address"),
        ("2001::1", "a special-purpose address"),
        ("2001:db8::1", "a special-purpose address"),
        ("2002:a00:1::1", "a special-purpose address"),
        ("3fff::1", "a special-purpose address"),
        ("4000::1", "a special-purpose address"),
    ];
    for (text, kind) in refused {
        let ip: IpAddr = text.parse().unwrap();
        assert_eq!(special(ip), Some(kind), "{text}");
    }
    let public = [
        "8.8.8.8",
        "1.1.1.1",
        "11.0.0.1",
        "172.15.255.255",
        "172.32.0.1",
        "100.63.255.255",
        "100.128.0.1",
        "169.253.255.255",
        "198.17.255.255",
        "198.20.0.1",
        "223.255.255.255",
        "2001:4860:4860::8888",
        "2606:4700:4700::1111",
        "2a00:1450:4001::1",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ];
    for text in public {
        let ip: IpAddr = text.parse().unwrap();
        assert_eq!(special(ip), None, "{text}");
    }
}

#[test]
fn the_old_ipv4_shorthands_and_bracketed_ipv6_are_read_as_the_address_they_spell() {
    let loopback = IpAddr::from(Ipv4Addr::LOCALHOST);
    for host in ["127.0.0.1", "127.1", "0x7f.1", "0x7f000001", "2130706433", "0177.0.0.1", "017700000001"] {
        assert_eq!(literal(host), Some(loopback), "{host}");
    }
    let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
    for host in ["[::ffff:7f00:1]", "::ffff:7f00:1", "[::ffff:127.0.0.1]"] {
        assert_eq!(literal(host), Some(mapped), "{host}");
    }
    for host in ["files.example.com", "127.0.0.1.example.com", "0x7f.example"] {
        assert_eq!(literal(host), None, "{host}");
    }
}

/// A resolver that answers from a script, one answer per call, and counts the calls.
struct Scripted {
    answers: Mutex<VecDeque<Vec<IpAddr>>>,
    calls: AtomicUsize,
}

impl Scripted {
    fn new(answers: &[&[&str]]) -> Scripted {
        let answers = answers.iter().map(|ips| ips.iter().map(|ip| ip.parse().unwrap()).collect()).collect();
        Scripted { answers: Mutex::new(answers), calls: AtomicUsize::new(0) }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Lookup for Scripted {
    fn lookup(&self, _: &str, port: u16) -> impl Future<Output = io::Result<Vec<SocketAddr>>> + Send {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let answer = self.answers.lock().unwrap().pop_front().unwrap_or_default();
        async move { Ok(answer.into_iter().map(|ip| SocketAddr::new(ip, port)).collect()) }
    }
}

/// A loopback listener nobody accepts on: a connection made to it waits in its backlog.
fn listener() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn connected(listener: &std::net::TcpListener) -> bool {
    match listener.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test]
async fn loopback_names_and_literals_are_refused_without_a_lookup_or_a_connection() {
    let (listener, port) = listener();
    let lookup = Scripted::new(&[]);
    for host in [
        "localhost",
        "LOCALHOST.",
        "shop.localhost",
        "localhost.localdomain",
        "ip6-localhost",
        "ip6-loopback",
        "127.0.0.1",
        "127.1",
        "0x7f.1",
        "2130706433",
        "[::ffff:7f00:1]",
        "::1",
    ] {
        let e = connect_with(&lookup, host, port, Reach::PublicOnly).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{host}");
        let refused = refusal(&e).unwrap_or_else(|| panic!("{host}: {e}"));
        assert_eq!(refused.kind(), "a loopback address", "{host}");
        assert!(refused.to_string().contains(host), "{host}: {refused}");
        assert_eq!(check_host_with(&lookup, host, port, Reach::PublicOnly).await.as_ref(), Err(refused));
    }
    assert_eq!(lookup.calls(), 0);
    assert!(!connected(&listener));
    // The same listener does see a connection made for an admin's row.
    let _stream = connect_with(&lookup, "127.0.0.1", port, Reach::Anywhere).await.unwrap();
    assert!(connected(&listener));
}

#[tokio::test]
async fn a_name_that_rebinds_to_loopback_after_the_check_is_refused_at_connect_time() {
    let (listener, port) = listener();
    let lookup = Scripted::new(&[&["93.184.216.34"], &["127.0.0.1"]]);
    assert_eq!(check_host_with(&lookup, "shop.test", port, Reach::PublicOnly).await, Ok(()));
    let e = connect_with(&lookup, "shop.test", port, Reach::PublicOnly).await.unwrap_err();
    let refused = refusal(&e).unwrap_or_else(|| panic!("{e}"));
    assert_eq!(refused.to_string(), "the host shop.test resolves to a loopback address");
    assert!(!refused.to_string().contains("127.0.0.1"), "the resolved address is not told: {refused}");
    assert_eq!(lookup.calls(), 2, "one lookup for the check, one for the connection");
    assert!(!connected(&listener));
}

#[tokio::test]
async fn every_address_a_name_resolves_to_is_checked() {
    let (listener, port) = listener();
    let lookup = Scripted::new(&[&["93.184.216.34", "10.1.2.3"], &["2606:4700::1", "fd00::1"]]);
    for kind in ["a private address", "a private (unique local) address"] {
        let e = connect_with(&lookup, "shop.test", port, Reach::PublicOnly).await.unwrap_err();
        assert_eq!(refusal(&e).map(Refused::kind), Some(kind));
    }
    assert!(!connected(&listener));
}

#[tokio::test]
async fn a_name_that_does_not_resolve_passes_the_check_and_fails_to_connect() {
    let lookup = Scripted::new(&[&[], &[]]);
    assert_eq!(check_host_with(&lookup, "nowhere.test", 21, Reach::PublicOnly).await, Ok(()));
    let e = connect_with(&lookup, "nowhere.test", 21, Reach::PublicOnly).await.unwrap_err();
    assert!(refusal(&e).is_none());
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
}

#[tokio::test]
async fn the_http_client_for_a_customer_users_address_refuses_literals_and_names_that_resolve_privately() {
    let (listener, port) = listener();
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://[::ffff:7f00:1]:{port}/"),
        format!("https://169.254.169.254:{port}/latest/meta-data/"),
    ] {
        let url = reqwest::Url::parse(&url).unwrap();
        let e = http_client(&url, Reach::PublicOnly).err().unwrap_or_else(|| panic!("{url} passed"));
        assert!(refusal(&e).is_some(), "{url}: {e}");
        assert!(http_client(&url, Reach::Anywhere).is_ok());
    }
    let client = public_only_client(Scripted::new(&[&["127.0.0.1"]])).unwrap();
    let e = client.get(format!("http://shop.test:{port}/")).send().await.unwrap_err();
    let cause = super::super::root_cause(&e);
    assert!(cause.contains("the host shop.test resolves to a loopback address"), "{cause}");
    assert!(!connected(&listener));
}

#[test]
fn a_row_a_customer_user_set_is_checked_unless_the_operator_allows_private_targets() {
    assert_eq!(Reach::for_row(SetBy::Customer, false), Reach::PublicOnly);
    assert_eq!(Reach::for_row(SetBy::Customer, true), Reach::Anywhere);
    assert_eq!(Reach::for_row(SetBy::Admin, false), Reach::Anywhere);
    assert_eq!(Reach::for_user(false, false), Reach::PublicOnly);
    assert_eq!(Reach::for_user(true, false), Reach::Anywhere);
}

#[test]
fn a_url_field_names_its_host_and_its_port_or_the_schemes() {
    let url = Address::of_url("adapter[url]", "https://shop.example.com/wp").unwrap();
    assert_eq!((url.field, url.host.as_str(), url.port), ("adapter[url]", "shop.example.com", 443));
    let url = Address::of_url("adapter[url]", "http://0x7f.1:8080/").unwrap();
    assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", 8080));
    assert_eq!(Address::of_url("adapter[url]", "not a url"), None);
}
