//! Every GraphQL document orderbridge sends to Shopify, word for word, with the cost Shopify
//! charges for it before it runs (its requested cost, by Shopify's published rules). A test
//! validates each against Shopify's official schema of [`API_VERSION`], refuses a deprecated
//! field, and recomputes each cost from that schema; changing the version means running it
//! again.

/// The Admin API version every request names (the annex pins it).
pub const API_VERSION: &str = "2026-07";

/// A document and what Shopify charges for it up front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Document {
    /// The operation's name, sent as `operationName`.
    pub name: &'static str,
    pub text: &'static str,
    /// Shopify's requested cost: the bucket must hold this much before the query runs.
    pub cost: u32,
}

/// Orders read in one page, each with its first [`LINES_PER_ORDER`] lines.
pub const ORDERS_PER_PAGE: usize = 20;

/// Lines read inside the orders query; an order with more pages the rest. 20 orders of
/// 3 lines cost 903 points, under Shopify's single-query limit of 1,000, and fit most
/// orders in one request for every 20.
pub const LINES_PER_ORDER: usize = 3;

/// Lines of one order read a page at a time after the first.
pub const LINES_PER_PAGE: usize = 50;

/// The largest single query Shopify runs.
pub const MAX_QUERY_COST: u32 = 1_000;

/// The fields of a line item that make an order item.
macro_rules! line_item_fragment {
    () => {
        "
fragment OrderbridgeLineItem on LineItem {
  id
  name
  sku
  currentQuantity
  requiresShipping
  originalUnitPriceSet {
    shopMoney {
      amount
    }
  }
  totalDiscountSet {
    shopMoney {
      amount
    }
  }
  taxLines {
    priceSet {
      shopMoney {
        amount
      }
    }
  }
  weight {
    unit
    value
  }
  variant {
    legacyResourceId
    barcode
  }
}
"
    };
}

/// The shop's name, and the app's scopes (a token without `read_orders` passes the first
/// and fails every pass).
pub const PING: Document = Document {
    name: "OrderbridgePing",
    text: "query OrderbridgePing {
  shop {
    name
  }
  currentAppInstallation {
    accessScopes {
      handle
    }
  }
}
",
    cost: 3,
};

/// One page of orders, oldest change first, each with its first lines.
pub const ORDERS: Document = Document {
    name: "OrderbridgeOrders",
    text: concat!(
        "query OrderbridgeOrders($query: String!, $after: String) {
  shop {
    weightUnit
  }
  orders(first: 20, after: $after, sortKey: UPDATED_AT, query: $query) {
    nodes {
      id
      legacyResourceId
      name
      processedAt
      updatedAt
      cancelledAt
      closed
      requiresShipping
      displayFinancialStatus
      displayFulfillmentStatus
      email
      note
      tags
      poNumber
      sourceName
      discountCodes
      paymentGatewayNames
      currencyCode
      currentShippingPriceSet {
        shopMoney {
          amount
        }
      }
      currentTotalTaxSet {
        shopMoney {
          amount
        }
      }
      currentTotalDiscountsSet {
        shopMoney {
          amount
        }
      }
      shippingLine {
        title
        taxLines {
          priceSet {
            shopMoney {
              amount
            }
          }
        }
      }
      shippingAddress {
        ...OrderbridgeAddress
      }
      billingAddress {
        ...OrderbridgeAddress
      }
      lineItems(first: 3) {
        nodes {
          ...OrderbridgeLineItem
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}

fragment OrderbridgeAddress on MailingAddress {
  firstName
  lastName
  address1
  address2
  city
  province
  provinceCode
  zip
  countryCodeV2
  phone
}
",
        line_item_fragment!()
    ),
    cost: 903,
};

/// The rest of an order's lines, after those its listing carried.
pub const ORDER_LINE_ITEMS: Document = Document {
    name: "OrderbridgeOrderLineItems",
    text: concat!(
        "query OrderbridgeOrderLineItems($id: ID!, $after: String) {
  order(id: $id) {
    id
    lineItems(first: 50, after: $after) {
      nodes {
        ...OrderbridgeLineItem
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
",
        line_item_fragment!()
    ),
    cost: 503,
};

/// What a notification needs to know of an order: its fulfillments (for the tracking
/// number) and the fulfillment orders whose lines a fulfillment takes units from.
pub const FULFILLMENT_STATE: Document = Document {
    name: "OrderbridgeFulfillmentState",
    text: "query OrderbridgeFulfillmentState($id: ID!, $after: String) {
  order(id: $id) {
    id
    cancelledAt
    fulfillments(first: 50) {
      id
      status
      trackingInfo(first: 5) {
        number
      }
    }
    fulfillmentOrders(first: 5, after: $after) {
      nodes {
        id
        status
        supportedActions {
          action
        }
        assignedLocation {
          location {
            id
          }
        }
        lineItems(first: 25) {
          nodes {
            id
            remainingQuantity
            lineItem {
              id
            }
          }
          pageInfo {
            hasNextPage
            endCursor
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
",
    cost: 583,
};

/// The rest of a fulfillment order's lines.
pub const FULFILLMENT_ORDER_LINE_ITEMS: Document = Document {
    name: "OrderbridgeFulfillmentOrderLineItems",
    text: "query OrderbridgeFulfillmentOrderLineItems($id: ID!, $after: String) {
  fulfillmentOrder(id: $id) {
    id
    lineItems(first: 100, after: $after) {
      nodes {
        id
        remainingQuantity
        lineItem {
          id
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
",
    cost: 203,
};

/// One fulfillment: tracking, and the units it takes from fulfillment-order lines.
pub const FULFILLMENT_CREATE: Document = Document {
    name: "OrderbridgeFulfillmentCreate",
    text: "mutation OrderbridgeFulfillmentCreate($fulfillment: FulfillmentInput!) {
  fulfillmentCreate(fulfillment: $fulfillment) {
    fulfillment {
      id
      status
    }
    userErrors {
      field
      message
    }
  }
}
",
    cost: 12,
};

/// The shop's primary location, where stock is set when the adapter names none.
pub const PRIMARY_LOCATION: Document = Document {
    name: "OrderbridgePrimaryLocation",
    text: "query OrderbridgePrimaryLocation {
  location {
    id
    legacyResourceId
    name
  }
}
",
    cost: 1,
};

/// Inventory items by SKU, with whether each is stocked at the location.
pub const INVENTORY_ITEMS: Document = Document {
    name: "OrderbridgeInventoryItems",
    text: "query OrderbridgeInventoryItems($query: String!, $locationId: ID!, $after: String) {
  inventoryItems(first: 100, after: $after, query: $query) {
    nodes {
      id
      sku
      tracked
      inventoryLevel(locationId: $locationId) {
        id
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
",
    cost: 202,
};

/// Absolute `available` levels; the key makes a batch sent again after a lost answer a
/// no-op at Shopify.
pub const SET_AVAILABLE: Document = Document {
    name: "OrderbridgeSetAvailable",
    text: "mutation OrderbridgeSetAvailable($input: InventorySetQuantitiesInput!, $idempotencyKey: String!) {
  inventorySetQuantities(input: $input) @idempotent(key: $idempotencyKey) {
    inventoryAdjustmentGroup {
      id
    }
    userErrors {
      code
      field
      message
    }
  }
}
",
    cost: 12,
};

/// Every document the client can send.
pub const ALL: [Document; 9] = [
    PING,
    ORDERS,
    ORDER_LINE_ITEMS,
    FULFILLMENT_STATE,
    FULFILLMENT_ORDER_LINE_ITEMS,
    FULFILLMENT_CREATE,
    PRIMARY_LOCATION,
    INVENTORY_ITEMS,
    SET_AVAILABLE,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_have_unique_names_and_fit_one_query() {
        let mut names: Vec<&str> = ALL.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for doc in ALL {
            assert!(doc.cost <= MAX_QUERY_COST, "{}", doc.name);
            assert!(doc.text.contains(doc.name), "{}", doc.name);
        }
        // The page sizes the text names are the ones the client counts with.
        assert!(ORDERS.text.contains(&format!("orders(first: {ORDERS_PER_PAGE},")));
        assert!(ORDERS.text.contains(&format!("lineItems(first: {LINES_PER_ORDER})")));
        assert!(ORDER_LINE_ITEMS.text.contains(&format!("lineItems(first: {LINES_PER_PAGE},")));
    }
}
