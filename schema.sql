-- orderbridge's schema, embedded in the binary and applied on first run.
-- Timestamps are INTEGER milliseconds since the Unix epoch (UTC): they compare and index
-- as numbers, and render as ISO 8601 with milliseconds at the edge.
-- JSON columns (adapter, locations) hold JSON text written by the service itself.

CREATE TABLE IF NOT EXISTS settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- Bumped by every write transaction (db::write), in this process or another (the CLI), so
-- cached listing counts know when they went stale.
CREATE TABLE IF NOT EXISTS data_generation (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
) STRICT;
INSERT OR IGNORE INTO data_generation (id, value) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS customers (
    id           INTEGER PRIMARY KEY,
    company_name TEXT NOT NULL,
    street1      TEXT,
    street2      TEXT,
    street3      TEXT,
    city         TEXT,
    state        TEXT,
    zipcode      TEXT,
    country      TEXT,
    provider     TEXT,
    created_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS customers_company_name ON customers (company_name);

CREATE TABLE IF NOT EXISTS users (
    id                 INTEGER PRIMARY KEY,
    username           TEXT NOT NULL UNIQUE,
    password_hash      TEXT NOT NULL,
    role               TEXT NOT NULL CHECK (role IN ('admin', 'customer')),
    customer_id        INTEGER REFERENCES customers (id),
    -- Tokens issued (iat, seconds) before this instant are refused: set by a password change.
    tokens_valid_after INTEGER NOT NULL DEFAULT 0,
    disabled_at        INTEGER,
    created_at         INTEGER NOT NULL,
    CHECK ((role = 'customer') = (customer_id IS NOT NULL))
) STRICT;

CREATE TABLE IF NOT EXISTS stores (
    id                   INTEGER PRIMARY KEY,
    customer_id          INTEGER NOT NULL REFERENCES customers (id),
    name                 TEXT NOT NULL,
    description          TEXT,
    url                  TEXT,
    platform             TEXT NOT NULL,
    adapter              TEXT NOT NULL,
    created_at           INTEGER NOT NULL,
    enabled_at           INTEGER,
    order_imported_at    INTEGER,
    inventory_updated_at INTEGER,
    -- Who last wrote the adapter, so set the address it points at: a customer user's is
    -- checked again at every connection (CONTRACT §6). Rows written by the CLI are an admin's.
    address_set_by       TEXT NOT NULL DEFAULT 'admin' CHECK (address_set_by IN ('admin', 'customer'))
) STRICT;
CREATE INDEX IF NOT EXISTS stores_customer ON stores (customer_id);
CREATE INDEX IF NOT EXISTS stores_name ON stores (name);

CREATE TABLE IF NOT EXISTS warehouses (
    id                       INTEGER PRIMARY KEY,
    customer_id              INTEGER NOT NULL REFERENCES customers (id),
    name                     TEXT,
    description              TEXT,
    platform                 TEXT NOT NULL,
    adapter                  TEXT NOT NULL,
    created_at               INTEGER NOT NULL,
    enabled_at               INTEGER,
    order_status_imported_at INTEGER,
    inventory_updated_at     INTEGER,
    -- As for stores.
    address_set_by           TEXT NOT NULL DEFAULT 'admin' CHECK (address_set_by IN ('admin', 'customer'))
) STRICT;
CREATE INDEX IF NOT EXISTS warehouses_customer ON warehouses (customer_id);
CREATE INDEX IF NOT EXISTS warehouses_name ON warehouses (name);

CREATE TABLE IF NOT EXISTS connections (
    id              INTEGER PRIMARY KEY,
    customer_id     INTEGER NOT NULL REFERENCES customers (id),
    store_id        INTEGER NOT NULL REFERENCES stores (id),
    warehouse_id    INTEGER NOT NULL REFERENCES warehouses (id),
    name            TEXT NOT NULL,
    connection_type TEXT NOT NULL,
    locations       TEXT NOT NULL DEFAULT '[]',
    created_at      INTEGER NOT NULL,
    enabled_at      INTEGER,
    CONSTRAINT connections_triple UNIQUE (customer_id, store_id, warehouse_id)
) STRICT;

CREATE TABLE IF NOT EXISTS channels (
    id            INTEGER PRIMARY KEY,
    connection_id INTEGER NOT NULL REFERENCES connections (id),
    type          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    enabled_at    INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS channels_connection ON channels (connection_id);

CREATE TABLE IF NOT EXISTS products (
    id          INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    sku         TEXT NOT NULL,
    variant_of  TEXT,
    master_id   INTEGER REFERENCES products (id),
    created_at  INTEGER NOT NULL,
    CONSTRAINT products_customer_sku UNIQUE (customer_id, sku)
) STRICT;

-- A bundle's components, in the order the client gave them.
CREATE TABLE IF NOT EXISTS product_bundle_items (
    product_id   INTEGER NOT NULL REFERENCES products (id),
    position     INTEGER NOT NULL,
    component_id INTEGER NOT NULL REFERENCES products (id),
    qty          INTEGER NOT NULL CHECK (qty >= 1),
    PRIMARY KEY (product_id, position)
) STRICT;

CREATE TABLE IF NOT EXISTS variant_collections (
    id          INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    name        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS variant_collections_customer ON variant_collections (customer_id);

CREATE TABLE IF NOT EXISTS variant_collection_products (
    collection_id INTEGER NOT NULL REFERENCES variant_collections (id),
    position      INTEGER NOT NULL,
    product_id    INTEGER NOT NULL REFERENCES products (id),
    PRIMARY KEY (collection_id, position)
) STRICT;

-- Orders and shipments are read-only in the API and change only through import, so each is
-- stored twice: as columns (every field, for filters, sorts and re-import) and as its
-- complete rendered JSON document in a side table, which a listing page concatenates into
-- the response. The documents live apart from the columns so index scans and counts touch
-- narrow rows only. Decimals are INTEGER hundredths; booleans 0/1; customer_id is copied
-- from the store so tenancy is an indexed equality.
CREATE TABLE IF NOT EXISTS orders (
    id                             INTEGER PRIMARY KEY,
    customer_id                    INTEGER NOT NULL REFERENCES customers (id),
    store_id                       INTEGER NOT NULL REFERENCES stores (id),
    external_id                    TEXT NOT NULL,
    external_display_id            TEXT,
    external_billing_customer_id   TEXT,
    external_shipping_customer_id  TEXT,
    customer_email                 TEXT,
    ordered_at                     INTEGER,
    invoice_number                 TEXT,
    payment_type                   TEXT,
    external_warehouse_order_id    TEXT,
    shipping_carrier_name          TEXT,
    shipping_carrier_service_level TEXT,
    shipping_warehouse_code        TEXT,
    signature_required             INTEGER,
    shipping_insurance             INTEGER,
    external_shipping_description  TEXT,
    external_source_display_id     TEXT,
    purchase_order_id              TEXT,
    notes                          TEXT,
    shipping_notes                 TEXT,
    gift_message                   TEXT,
    batch_id                       TEXT,
    shipping_amount                INTEGER,
    discount_amount                INTEGER,
    tax_amount                     INTEGER,
    shipping_tax_amount            INTEGER,
    third_party_account_number     TEXT,
    third_party_billing_code       TEXT,
    discount_codes                 TEXT,
    external_source_id             TEXT,
    lead_source                    TEXT,
    packing_slip_id                TEXT,
    requested_ship_date            INTEGER,
    requested_cancel_date          INTEGER,
    payment_date                   INTEGER,
    external_tags                  TEXT,
    retailer_id                    TEXT,
    supplier_id                    TEXT,
    insured_amount                 INTEGER,
    terms                          TEXT,
    sales_rep_last_name            TEXT,
    sales_rep_first_name           TEXT,
    sales_rep_email                TEXT,
    fulfillment_state              TEXT,
    fulfillment_transitioned_at    INTEGER,
    external_type                  TEXT,
    fulfillment_warehouse_id       INTEGER,
    country_of_origin              TEXT,
    shipment_contents              TEXT,
    declared_value                 INTEGER,
    currency_code                  TEXT,
    customer_service_url           TEXT,
    customer_service_email         TEXT,
    customer_service_telephone     TEXT,
    created_at                     INTEGER NOT NULL,
    -- Normalized JSON: the address objects (or NULL) and the custom map.
    shipping_address               TEXT,
    billing_address                TEXT,
    custom                         TEXT NOT NULL DEFAULT '{}'
) STRICT;
-- The import key.
CREATE UNIQUE INDEX IF NOT EXISTS orders_store_external ON orders (store_id, external_id);
-- Every index implicitly ends in id, which is what keyset pages and "ties by id" need.
-- customer_id alone is served by the prefix of the composite indexes; store_id keeps its
-- own index because sorting by store_id needs (store_id, id) order.
CREATE INDEX IF NOT EXISTS orders_store ON orders (store_id);
-- (store_id, ordered_at) answers "one store, a date window, by date" from the index alone.
CREATE INDEX IF NOT EXISTS orders_store_ordered_at ON orders (store_id, ordered_at);
CREATE INDEX IF NOT EXISTS orders_customer_ordered_at ON orders (customer_id, ordered_at);
CREATE INDEX IF NOT EXISTS orders_customer_created_at ON orders (customer_id, created_at);
CREATE INDEX IF NOT EXISTS orders_ordered_at ON orders (ordered_at);
CREATE INDEX IF NOT EXISTS orders_created_at ON orders (created_at);
CREATE INDEX IF NOT EXISTS orders_external_id ON orders (external_id);
CREATE INDEX IF NOT EXISTS orders_external_display_id ON orders (external_display_id);
CREATE INDEX IF NOT EXISTS orders_fulfillment_state ON orders (fulfillment_state);
-- Sync sends a store's `new` orders.
CREATE INDEX IF NOT EXISTS orders_store_fulfillment_state ON orders (store_id, fulfillment_state);

CREATE TABLE IF NOT EXISTS order_docs (
    id  INTEGER PRIMARY KEY REFERENCES orders (id),
    doc TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS order_items (
    id                     INTEGER PRIMARY KEY,
    order_id               INTEGER NOT NULL REFERENCES orders (id),
    position               INTEGER NOT NULL,
    name                   TEXT,
    sku                    TEXT,
    upc                    TEXT,
    unit_price             INTEGER,
    unit_cost              INTEGER,
    weight                 INTEGER,
    external_order_item_id TEXT,
    external_product_id    TEXT,
    discount_amount        INTEGER,
    tax_amount             INTEGER,
    gift_wrap              INTEGER,
    customer_notes         TEXT,
    vendor_id              TEXT,
    vendor_part_number     TEXT,
    buyer_part_number      TEXT,
    color_description      TEXT,
    size_description       TEXT,
    drop_ship              TEXT,
    product_type           TEXT,
    quantity               INTEGER NOT NULL,
    created_at             INTEGER NOT NULL,
    options                TEXT NOT NULL DEFAULT '[]',
    custom                 TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX IF NOT EXISTS order_items_order ON order_items (order_id, position);

CREATE TABLE IF NOT EXISTS shipments (
    id                            INTEGER PRIMARY KEY,
    customer_id                   INTEGER NOT NULL REFERENCES customers (id),
    store_id                      INTEGER NOT NULL REFERENCES stores (id),
    order_id                      INTEGER NOT NULL REFERENCES orders (id),
    warehouse_id                  INTEGER NOT NULL REFERENCES warehouses (id),
    tracking_number               TEXT NOT NULL,
    state                         TEXT NOT NULL CHECK (state IN ('new', 'ready_for_shipment_notification',
        'scheduled_notify_of_shipment', 'scheduled_processing_shipment', 'errored_processing',
        'delayed_notifying_of_shipment', 'errored_notifying_of_shipment', 'notified_shipped', 'archived')),
    shipped_at                    INTEGER,
    weight                        INTEGER,
    external_shipping_description TEXT,
    carrier_name                  TEXT,
    service_level                 TEXT,
    created_at                    INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS shipments_order_tracking ON shipments (order_id, tracking_number);
CREATE INDEX IF NOT EXISTS shipments_tracking_number ON shipments (tracking_number);
CREATE INDEX IF NOT EXISTS shipments_shipped_at ON shipments (shipped_at);
CREATE INDEX IF NOT EXISTS shipments_created_at ON shipments (created_at);
CREATE INDEX IF NOT EXISTS shipments_store_shipped_at ON shipments (store_id, shipped_at);
CREATE INDEX IF NOT EXISTS shipments_warehouse ON shipments (warehouse_id);
CREATE INDEX IF NOT EXISTS shipments_state ON shipments (state);
CREATE INDEX IF NOT EXISTS shipments_customer_shipped_at ON shipments (customer_id, shipped_at);

-- A shipment's items: links to items of its order, in the order the import gave them.
CREATE TABLE IF NOT EXISTS shipment_items (
    shipment_id   INTEGER NOT NULL REFERENCES shipments (id),
    position      INTEGER NOT NULL,
    order_item_id INTEGER NOT NULL REFERENCES order_items (id),
    -- Units of the item this shipment holds; NULL (an imported shipment) means every unit.
    quantity      INTEGER,
    PRIMARY KEY (shipment_id, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS shipment_items_item ON shipment_items (order_item_id);

CREATE TABLE IF NOT EXISTS shipment_docs (
    id  INTEGER PRIMARY KEY REFERENCES shipments (id),
    doc TEXT NOT NULL
) STRICT;

-- Sync (CONTRACT §11). Orders and shipments carry their own states, which are the engine's
-- queue; these tables hold only what the states do not: runs, cursors, files, attempts.

-- One row per pass of a connection.
CREATE TABLE IF NOT EXISTS sync_runs (
    id                 INTEGER PRIMARY KEY,
    connection_id      INTEGER NOT NULL REFERENCES connections (id),
    trigger            TEXT NOT NULL CHECK (trigger IN ('schedule', 'request')),
    started_at         INTEGER NOT NULL,
    finished_at        INTEGER,
    status             TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    orders_pulled      INTEGER NOT NULL DEFAULT 0,
    orders_sent        INTEGER NOT NULL DEFAULT 0,
    shipments_pulled   INTEGER NOT NULL DEFAULT 0,
    shipments_notified INTEGER NOT NULL DEFAULT 0,
    stock_levels_sent  INTEGER NOT NULL DEFAULT 0,
    error_step         TEXT,
    error_code         TEXT,
    error_message      TEXT,
    -- Every problem of the pass, also those past the ones kept in sync_run_problems.
    problems_count     INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS sync_runs_connection ON sync_runs (connection_id, id);
CREATE INDEX IF NOT EXISTS sync_runs_status ON sync_runs (status);

-- What a pass could not do for one item while it went on (CONTRACT §11, "Runs"): the first
-- 100 of each run, in the order they happened; pruned with their run.
CREATE TABLE IF NOT EXISTS sync_run_problems (
    run_id   INTEGER NOT NULL REFERENCES sync_runs (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    step     TEXT NOT NULL CHECK (step IN ('pull_orders', 'send_orders', 'pull_shipments', 'notify', 'stock')),
    kind     TEXT NOT NULL CHECK (kind IN ('order', 'shipment', 'file', 'sku')),
    ref      TEXT NOT NULL,
    message  TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
) STRICT, WITHOUT ROWID;

-- A store's pull cursor: the platform's modification time (ms) of the last order read.
CREATE TABLE IF NOT EXISTS store_cursors (
    store_id INTEGER PRIMARY KEY REFERENCES stores (id),
    cursor   INTEGER NOT NULL
) STRICT;

-- A store's walk of orders that stopped part-way (a rate limit, a failure, a restart) for the
-- next pass, in any process, to go on with (CONTRACT §11 "Pulls that resume"): its
-- continuation in the platform's own words with what the walk read so far, as JSON, and when
-- the page that handed it out was written (ms). Written with each page, removed with the last.
CREATE TABLE IF NOT EXISTS store_walks (
    store_id INTEGER PRIMARY KEY REFERENCES stores (id),
    walk     TEXT NOT NULL,
    saved_at INTEGER NOT NULL
) STRICT;

-- What sync knows of a pulled order beyond its document: the version it was written at
-- (BigCommerce's modification time, a fingerprint of Sellbrite's listed order; an unchanged
-- order is not fetched or written again), its shipping address id, and its tries at the
-- warehouse with the latest problem (GET /orders/{id}/sync).
CREATE TABLE IF NOT EXISTS order_sync (
    order_id           INTEGER PRIMARY KEY REFERENCES orders (id),
    source_modified_at INTEGER,
    address_id         TEXT,
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at    INTEGER,
    last_error         TEXT,
    last_error_at      INTEGER,
    last_error_step    TEXT
) STRICT;

-- Order files sent to a warehouse: claimed, written, then marked delivered. The file's name is
-- recorded before it is written, and a warehouse that numbers its documents (X12: the
-- interchange control number) has the number and the time it was made recorded too, so a
-- resend writes the same bytes under the same name.
CREATE TABLE IF NOT EXISTS order_batches (
    id            INTEGER PRIMARY KEY,
    connection_id INTEGER NOT NULL REFERENCES connections (id),
    number        INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    delivered_at  INTEGER,
    document      INTEGER,
    document_at   INTEGER,
    document_name TEXT,
    CONSTRAINT order_batches_number UNIQUE (connection_id, number)
) STRICT;
-- part: the order's place in its batch's document (an X12 set number), once delivered.
CREATE TABLE IF NOT EXISTS order_batch_orders (
    batch_id INTEGER NOT NULL REFERENCES order_batches (id),
    order_id INTEGER NOT NULL REFERENCES orders (id),
    part     INTEGER,
    PRIMARY KEY (batch_id, order_id)
) STRICT, WITHOUT ROWID;
-- A warehouse's document counter (X12 control numbers): the next number, and the first number
-- the adapter asked for when it was last applied (a raised first_control_number moves it on).
CREATE TABLE IF NOT EXISTS warehouse_counters (
    warehouse_id INTEGER PRIMARY KEY REFERENCES warehouses (id),
    next         INTEGER NOT NULL,
    first        INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS order_batch_orders_order ON order_batch_orders (order_id);

-- A shipment's way through sync: the items a warehouse file named (JSON, before they are
-- matched to order items), notification attempts and the last problem.
CREATE TABLE IF NOT EXISTS shipment_sync (
    shipment_id     INTEGER PRIMARY KEY REFERENCES shipments (id),
    requested       TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    last_error      TEXT,
    notified_at     INTEGER,
    last_error_at   INTEGER,
    last_error_step TEXT,
    -- 1 from a try that may have reached the store until the store's answer settles it: the
    -- next try looks at the store before telling it again, whatever the shipment's state.
    in_doubt        INTEGER NOT NULL DEFAULT 0 CHECK (in_doubt IN (0, 1))
) STRICT;
-- Shipments the store was told of and not yet archived, by when it was told: each pass finds
-- the ones due for archiving without reading every shipment (archiving clears notified_at).
CREATE INDEX IF NOT EXISTS shipment_sync_notified ON shipment_sync (notified_at) WHERE notified_at IS NOT NULL;

-- Stock: what each warehouse last said it holds, and what each connection last sent.
CREATE TABLE IF NOT EXISTS warehouse_stock (
    warehouse_id INTEGER NOT NULL REFERENCES warehouses (id),
    sku          TEXT NOT NULL,
    quantity     INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (warehouse_id, sku)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stock_sent (
    connection_id INTEGER NOT NULL REFERENCES connections (id),
    sku           TEXT NOT NULL,
    quantity      INTEGER NOT NULL,
    sent_at       INTEGER NOT NULL,
    PRIMARY KEY (connection_id, sku)
) STRICT, WITHOUT ROWID;

-- Stock levels a store took to apply later (Amazon's feeds): the receipt (a feed's id), the
-- connection whose levels it carries and their SKUs (a JSON array), read at later passes
-- until the store says what became of them.
CREATE TABLE IF NOT EXISTS store_receipts (
    store_id      INTEGER NOT NULL REFERENCES stores (id),
    receipt       TEXT NOT NULL,
    connection_id INTEGER NOT NULL REFERENCES connections (id),
    skus          TEXT NOT NULL,
    sent_at       INTEGER NOT NULL,
    PRIMARY KEY (store_id, receipt)
) STRICT, WITHOUT ROWID;

-- Warehouses reached by API (CONTRACT §11): the store's cancellations of orders a warehouse
-- holds, until the warehouse answered (deleted when cancelled; `reported_at` when it could not
-- be, so the conflict is reported once).
CREATE TABLE IF NOT EXISTS order_cancels (
    order_id     INTEGER PRIMARY KEY REFERENCES orders (id),
    requested_at INTEGER NOT NULL,
    reported_at  INTEGER
) STRICT;

-- A warehouse's shipments cursor: its own change time (ms) of the last shipment read.
CREATE TABLE IF NOT EXISTS warehouse_cursors (
    warehouse_id INTEGER PRIMARY KEY REFERENCES warehouses (id),
    cursor       INTEGER NOT NULL
) STRICT;

-- A warehouse's walk of shipments that stopped part-way (a page limit) for the next pass to go
-- on with: where it was, in its platform's own words (CONTRACT §11 "Pulls that resume").
CREATE TABLE IF NOT EXISTS warehouse_walks (
    warehouse_id INTEGER PRIMARY KEY REFERENCES warehouses (id),
    walk         TEXT NOT NULL
) STRICT;

-- Warehouse shipments of orders that are not ours, named once in a run's problems.
CREATE TABLE IF NOT EXISTS warehouse_strangers (
    warehouse_id INTEGER NOT NULL REFERENCES warehouses (id),
    ref          TEXT NOT NULL,
    seen_at      INTEGER NOT NULL,
    PRIMARY KEY (warehouse_id, ref)
) STRICT, WITHOUT ROWID;

-- Who runs a connection's pass now, across processes (a server and `orderbridge sync` on one
-- file): a lease, renewed while the pass runs and taken over once it expired.
CREATE TABLE IF NOT EXISTS sync_leases (
    connection_id INTEGER PRIMARY KEY REFERENCES connections (id),
    holder        TEXT NOT NULL,
    run_id        INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
) STRICT;
