-- orderbridge's schema, embedded in the binary and applied on first run.
-- Timestamps are INTEGER milliseconds since the Unix epoch (UTC): they compare and index
-- as numbers, and render as ISO 8601 with milliseconds at the edge.
-- JSON columns (adapter, locations) hold JSON text written by the service itself.

CREATE TABLE IF NOT EXISTS settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

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
    inventory_updated_at INTEGER
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
    inventory_updated_at     INTEGER
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
