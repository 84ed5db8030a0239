//! ShipBob's OpenAPI file (`../shared/vendor/shipbob/openapi-2026-01.json`), loaded once and
//! read as its README says where it contradicts itself, for any test in the crate that holds
//! requests (the client's) or answers (this simulator's) to it:
//! `vendor::problems(&sim.exchanges())` is empty when every exchange follows the file.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::json;

use crate::simulate::openapi_check::{Description, Exchange, Patch, Readings};

/// Where the file is (`shared/vendor/shipbob`).
fn file() -> PathBuf {
    crate::simulate::shared_files::shared("vendor/shipbob/openapi-2026-01.json")
}

/// The README's readings that hold in many places at once (its items 1, 4, 5, 6 and the
/// case of query names in 3).
pub(super) fn readings() -> Readings {
    Readings {
        // README 1: each closes itself and names a closed base in allOf; read literally, no
        // product (and no retailer address) can be valid.
        inherit_closed_bases: &[
            "Orders.AddProductToOrderByReferenceIdModel",
            "Orders.AddProductToOrderByProductIdModel",
            "Orders.RetailerProgramDataAddressViewModel",
        ],
        // README 5: `additionalProperties: false` on scalars, arrays, `$ref` siblings and
        // `oneOf` wrappers would refuse every object.
        open_without_properties: true,
        // README 3: ShipBob's servers are ASP.NET, which binds query names in any case.
        query_names_any_case: true,
        // README 4: `ReferenceIds`, `IDs`, `InventoryIds` are `string` with `items`.
        comma_lists: true,
        // README 4: `Page` and `Limit` are `number` with `format: int32`.
        whole_numbers: true,
        // README 6: no operation declares 429; only Cancel Order declares a 5xx.
        undeclared_429_and_5xx: true,
    }
}

/// The README's readings at one place each, quoting what the file says there.
pub(super) fn patches() -> Vec<Patch> {
    vec![Patch {
        // README 3: Get All Inventory Levels declares no cursor, yet its `next` links carry
        // one. The file declares six parameters there; a seventh, `cursor`, is read in.
        pointer: "/paths/~12026-01~1inventory-level/get/parameters/6",
        was: None,
        now: Some(json!({"name": "cursor", "in": "query", "description": "from a `next` link",
                         "schema": {"type": "string"}})),
        why: "Get All Inventory Levels declares no cursor parameter, but its answers' `next` links carry \
              `cursor` (as the Get Channels example shows for that operation)",
    }]
}

/// The file, loaded once, patched and read as the README says.
pub fn description() -> &'static Description {
    static LOADED: OnceLock<Description> = OnceLock::new();
    LOADED.get_or_init(|| {
        Description::load_read(&file(), &patches(), readings())
            .unwrap_or_else(|e| panic!("ShipBob's file: {e}"))
    })
}

/// Everything in `exchanges` that the file does not allow, one line each; empty when all hold.
pub fn problems(exchanges: &[Exchange]) -> Vec<String> {
    exchanges.iter().flat_map(|e| description().check(e)).collect()
}
