//! Amazon's marketplaces as `getMarketplaceParticipations` describes them, and what the
//! generated orders' buyers and addresses are drawn from, per country.

/// A marketplace and whether the seller takes part in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marketplace {
    pub id: String,
    pub name: String,
    pub country_code: String,
    pub currency: String,
    pub language: String,
    pub domain: String,
    pub participating: bool,
}

/// (id, name, country, currency, language, domain).
const KNOWN: [(&str, &str, &str, &str, &str, &str); 10] = [
    ("ATVPDKIKX0DER", "Amazon.com", "US", "USD", "en_US", "www.amazon.com"),
    ("A2EUQ1WTGCTBG2", "Amazon.ca", "CA", "CAD", "en_CA", "www.amazon.ca"),
    ("A1AM78C64UM0Y8", "Amazon.com.mx", "MX", "MXN", "es_MX", "www.amazon.com.mx"),
    ("A1F83G8C2ARO7P", "Amazon.co.uk", "GB", "GBP", "en_GB", "www.amazon.co.uk"),
    ("A1PA6795UKMFR9", "Amazon.de", "DE", "EUR", "de_DE", "www.amazon.de"),
    ("A13V1IB3VIYZZH", "Amazon.fr", "FR", "EUR", "fr_FR", "www.amazon.fr"),
    ("APJ6JRA9NG5V4", "Amazon.it", "IT", "EUR", "it_IT", "www.amazon.it"),
    ("A1RKKUPIHCS9HS", "Amazon.es", "ES", "EUR", "es_ES", "www.amazon.es"),
    ("A1VC38T7YXB528", "Amazon.co.jp", "JP", "JPY", "ja_JP", "www.amazon.co.jp"),
    ("A39IBJ37TRP1C6", "Amazon.com.au", "AU", "AUD", "en_AU", "www.amazon.com.au"),
];

impl Marketplace {
    /// One of Amazon's marketplaces by id (Amazon.com, .ca, .com.mx, .co.uk, .de, .fr, .it,
    /// .es, .co.jp, .com.au), the seller taking part.
    pub fn by_id(id: &str) -> Option<Marketplace> {
        KNOWN.iter().find(|m| m.0 == id).map(|(id, name, country, currency, language, domain)| Marketplace {
            id: (*id).into(),
            name: (*name).into(),
            country_code: (*country).into(),
            currency: (*currency).into(),
            language: (*language).into(),
            domain: (*domain).into(),
            participating: true,
        })
    }

    /// [`Marketplace::by_id`], or a US-like marketplace of that id.
    pub(super) fn or_made_up(id: &str) -> Marketplace {
        Marketplace::by_id(id).unwrap_or_else(|| Marketplace {
            id: id.into(),
            name: format!("Amazon {id}"),
            ..Marketplace::by_id("ATVPDKIKX0DER").expect("Amazon.com")
        })
    }

    /// Digits after the decimal point of the marketplace's currency (yen has none).
    pub(super) fn decimals(&self) -> u32 {
        if self.currency == "JPY" { 0 } else { 2 }
    }

    /// The channel code Amazon's own fulfilment network has in this marketplace's region.
    pub(super) fn afn_code(region: &str) -> &'static str {
        match region {
            "eu" => "AMAZON_EU",
            "fe" => "AMAZON_JP",
            _ => "AMAZON_NA",
        }
    }

    /// The tax rate orders in this marketplace are charged, in hundredths of a percent.
    pub(super) fn tax_basis_points(&self, draw: u64) -> i64 {
        match self.country_code.as_str() {
            "US" => [0, 625, 825, 1025, 875][draw as usize % 5],
            "JP" => 1000,
            "GB" => 2000,
            "CA" => 1300,
            _ => 1900,
        }
    }

    /// The first three digits of the marketplace's order ids.
    pub(super) fn order_prefix(&self, draw: u64) -> u64 {
        match self.country_code.as_str() {
            "US" | "CA" | "MX" => [111, 112, 113, 114][draw as usize % 4],
            "JP" => 503,
            "AU" => 249,
            _ => [202, 203, 302, 305, 404, 28][draw as usize % 6],
        }
    }
}

/// A recipient: with and without a space in the name (one-word names happen).
pub(super) const NAMES: [&str; 12] = [
    "Ana Maria Lima",
    "John Smith",
    "Chloé Dubois",
    "Cher",
    "Kenji Watanabe",
    "Grace O'Neill",
    "Müller",
    "Priya Raman",
    "Hugo van der Berg",
    "Ben Okafor",
    "Yuki",
    "María José García",
];

/// (line1, city, state or region, postal code, phone) per country; the line 2 and 3 are
/// drawn apart.
pub(super) fn street(
    country: &str,
    draw: u64,
) -> (&'static str, &'static str, Option<&'static str>, &'static str, &'static str) {
    const US: [(&str, &str, Option<&str>, &str, &str); 4] = [
        ("500 Pine St", "Seattle", Some("WA"), "98101-1234", "+1 206-555-0100"),
        ("455 Main Street", "Austin", Some("TX"), "78751", "+1 512-555-0142"),
        ("12 Elm Road", "Portland", Some("ME"), "04101", "+1 207-555-0199"),
        ("9 Harbor Way", "San Diego", Some("CA"), "92101", "+1 619-555-0111"),
    ];
    const GB: [(&str, &str, Option<&str>, &str, &str); 2] = [
        ("221 Baker Street", "London", None, "NW1 6XE", "+44 20 7946 0958"),
        ("14 Park Row", "Leeds", Some("West Yorkshire"), "LS1 5HD", "+44 113 496 0000"),
    ];
    const DE: [(&str, &str, Option<&str>, &str, &str); 2] = [
        ("Hauptstraße 5", "Berlin", None, "10115", "+49 30 901820"),
        ("Königsallee 12", "Düsseldorf", Some("NRW"), "40212", "+49 211 123456"),
    ];
    const JP: [(&str, &str, Option<&str>, &str, &str); 2] = [
        ("1-2-3 Shibuya", "Shibuya-ku", Some("Tokyo"), "150-0002", "+81 3-1234-5678"),
        ("4-5-6 Umeda", "Kita-ku", Some("Osaka"), "530-0001", "+81 6-1234-5678"),
    ];
    let pick = |list: &[(&'static str, &'static str, Option<&'static str>, &'static str, &'static str)]| {
        list[draw as usize % list.len()]
    };
    match country {
        "GB" => pick(&GB),
        "DE" | "FR" | "IT" | "ES" => pick(&DE),
        "JP" => pick(&JP),
        _ => pick(&US),
    }
}

pub(super) const LINE2: [&str; 3] = ["Apt 4", "Suite 200", "Floor 3"];
pub(super) const LINE3: [&str; 2] = ["c/o Reception", "Building B"];
pub(super) const INSTRUCTIONS: [&str; 2] = ["Leave with the doorman", "Ring twice"];
pub(super) const SERVICE_LEVELS: [&str; 4] = ["STANDARD", "EXPEDITED", "SECOND_DAY", "NEXT_DAY"];
pub(super) const GIFT_MESSAGES: [&str; 3] =
    ["Happy birthday!", "Congratulations", "With love, from all of us"];
pub(super) const PRODUCT_TYPES: [&str; 4] = ["DRINKING_CUP", "TEA", "KITCHEN", "HOME"];
pub(super) const PRODUCTS: [&str; 6] =
    ["Ceramic Mug", "Green Tea 100 g", "Tea Strainer", "Coaster Set", "Teapot 1 l", "Travel Cup"];
