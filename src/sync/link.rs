//! A connection as a pass sees it: its store and warehouse with their platforms and adapters,
//! and which of its channels would sync (CONTRACT §11, "When a connection syncs").

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value};

use crate::config::SyncMode;
use crate::db::settings_from_column;
use crate::fields::Details;
use crate::platforms::reach::{Reach, SetBy};
use crate::platforms::warehouse::Learned;

#[derive(Debug, Clone)]
pub struct Link {
    pub id: i64,
    pub customer_id: i64,
    pub store_id: i64,
    pub warehouse_id: i64,
    pub store_platform: String,
    /// Unmasked: for the platform clients only, never for a response or a message.
    pub store_adapter: Map<String, Value>,
    pub warehouse_platform: String,
    pub warehouse_adapter: Map<String, Value>,
    pub enabled: bool,
    pub store_enabled: bool,
    pub warehouse_enabled: bool,
    pub sales_enabled: bool,
    pub inventory_enabled: bool,
    /// Who set the store's and the warehouse's addresses (CONTRACT §6).
    pub store_set_by: SetBy,
    pub warehouse_set_by: SetBy,
}

const SELECT: &str =
    "SELECT c.id, c.customer_id, c.store_id, c.warehouse_id, s.platform, ob_open(s.adapter), w.platform,
       ob_open(w.adapter), c.enabled_at IS NOT NULL, s.enabled_at IS NOT NULL, w.enabled_at IS NOT NULL,
       EXISTS (SELECT 1 FROM channels ch WHERE ch.connection_id = c.id AND ch.type = 'sales'
                                            AND ch.enabled_at IS NOT NULL),
       EXISTS (SELECT 1 FROM channels ch WHERE ch.connection_id = c.id AND ch.type = 'inventory'
                                            AND ch.enabled_at IS NOT NULL),
       s.address_set_by, w.address_set_by
     FROM connections c JOIN stores s ON s.id = c.store_id JOIN warehouses w ON w.id = c.warehouse_id";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Link> {
    Ok(Link {
        id: r.get(0)?,
        customer_id: r.get(1)?,
        store_id: r.get(2)?,
        warehouse_id: r.get(3)?,
        store_platform: r.get(4)?,
        store_adapter: settings_from_column(r, 5)?,
        warehouse_platform: r.get(6)?,
        warehouse_adapter: settings_from_column(r, 7)?,
        enabled: r.get(8)?,
        store_enabled: r.get(9)?,
        warehouse_enabled: r.get(10)?,
        sales_enabled: r.get(11)?,
        inventory_enabled: r.get(12)?,
        store_set_by: r.get(13)?,
        warehouse_set_by: r.get(14)?,
    })
}

impl Link {
    /// A connection the caller may see (`scope` is a customer user's customer).
    pub fn load(conn: &Connection, id: i64, scope: Option<i64>) -> rusqlite::Result<Option<Link>> {
        conn.prepare_cached(&format!("{SELECT} WHERE c.id = ?1 AND (?2 IS NULL OR c.customer_id = ?2)"))?
            .query_row(params![id, scope], from_row)
            .optional()
    }

    /// The ids of every connection with a channel that syncs.
    pub fn syncing_ids(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
        let mut stmt = conn.prepare_cached(
            "SELECT c.id FROM connections c JOIN stores s ON s.id = c.store_id
               JOIN warehouses w ON w.id = c.warehouse_id
             WHERE c.enabled_at IS NOT NULL AND s.enabled_at IS NOT NULL AND w.enabled_at IS NOT NULL
               AND EXISTS (SELECT 1 FROM channels ch WHERE ch.connection_id = c.id
                             AND ch.type IN ('sales', 'inventory') AND ch.enabled_at IS NOT NULL)
             ORDER BY c.id",
        )?;
        let ids = stmt.query_map([], |r| r.get(0))?;
        ids.collect()
    }

    fn connected(&self) -> bool {
        self.enabled && self.store_enabled && self.warehouse_enabled
    }

    pub fn sales_syncs(&self) -> bool {
        self.connected() && self.sales_enabled
    }

    pub fn inventory_syncs(&self) -> bool {
        self.connected() && self.inventory_enabled
    }

    /// What keeps this connection from syncing, one entry per reason; empty when a channel
    /// would sync. `mode` is the configured `sync_mode` (the `sync` command ignores it).
    pub fn why_not(&self, mode: Option<SyncMode>) -> Details {
        let mut why = Details::new();
        if mode == Some(SyncMode::Off) {
            why.insert("sync_mode".into(), "is off: this server runs no sync".into());
        }
        if !self.enabled {
            why.insert("connection".into(), format!("connection {} is disabled", self.id));
        }
        if !self.store_enabled {
            why.insert("store".into(), format!("store {} is disabled", self.store_id));
        }
        if !self.warehouse_enabled {
            why.insert("warehouse".into(), format!("warehouse {} is disabled", self.warehouse_id));
        }
        if !self.sales_enabled && !self.inventory_enabled {
            why.insert("channels".into(), "the sales and inventory channels are disabled".into());
        }
        why
    }

    /// Where a connection to the warehouse may lead: public addresses only when a customer
    /// user set its address, unless `tenant_private_targets` (read now, not when it was set).
    pub fn warehouse_reach(&self, tenant_private_targets: bool) -> Reach {
        Reach::for_row(self.warehouse_set_by, tenant_private_targets)
    }

    /// As [`Link::warehouse_reach`], for a store platform with an address of its own.
    pub fn store_reach(&self, tenant_private_targets: bool) -> Reach {
        Reach::for_row(self.store_set_by, tenant_private_targets)
    }
}

/// Records in a warehouse's adapter what its server showed at a pass's first session
/// (`learned.key`, e.g. a host key), unless someone set one meanwhile or changed where it
/// connects (`learned.unless_changed` no longer reads `guard`). Returns whether it was kept.
pub(super) fn keep_learned(
    conn: &Connection,
    warehouse_id: i64,
    learned: &Learned,
    guard: &str,
) -> rusqlite::Result<bool> {
    let (key, guard_key) = (format!("$.{}", learned.key), format!("$.{}", learned.unless_changed));
    let changed = conn.execute(
        "UPDATE warehouses SET adapter = json_set(adapter, ?2, ?3) \
         WHERE id = ?1 AND json_extract(adapter, ?2) IS NULL \
           AND json_extract(ob_open(adapter), ?5) = ?4",
        params![warehouse_id, key, learned.value, guard, guard_key],
    )?;
    Ok(changed > 0)
}
