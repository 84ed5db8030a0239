#!/usr/bin/env bash
# End-to-end walkthrough of orderbridge's API with curl: a token, then a customer, a store,
# a warehouse, a connection, its sales channel enabled, and the resulting listings.
#
#   ORDERBRIDGE_URL=http://127.0.0.1:8000 ORDERBRIDGE_USER=admin ORDERBRIDGE_PASSWORD=... \
#     examples/walkthrough.sh
#
# Needs curl only. Every step prints the request's answer; the script stops at the first
# unexpected status.
set -euo pipefail

BASE=${ORDERBRIDGE_URL:-http://127.0.0.1:8000}
USER_NAME=${ORDERBRIDGE_USER:-admin}
PASSWORD=${ORDERBRIDGE_PASSWORD:?set ORDERBRIDGE_PASSWORD to the admin password orderbridge printed}

# call EXPECTED_STATUS METHOD PATH [curl args...]: prints the body, fails on another status.
call() {
  local expected=$1 method=$2 path=$3
  shift 3
  local out status
  out=$(curl -sS -w '\n%{http_code}' -X "$method" "$BASE$path" -H "Authorization: Bearer $TOKEN" "$@")
  status=${out##*$'\n'}
  body=${out%$'\n'*}
  printf '%s %s -> %s %s\n' "$method" "$path" "$status" "$body" >&2
  if [ "$status" != "$expected" ]; then
    echo "expected $expected" >&2
    exit 1
  fi
}

# id_of BODY: the "id" of a {"id": N} answer.
id_of() { sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$1"; }

echo "== 1. a token (OAuth 2.0 client credentials)" >&2
TOKEN=$(curl -sS -u "$USER_NAME:$PASSWORD" -H 'Content-Type: application/json' \
  -d '{"grant_type":"client_credentials"}' "$BASE/auth/token" |
  sed -E 's/.*"access_token":"([^"]+)".*/\1/')
[ -n "$TOKEN" ] || { echo "no token: check the user and password" >&2; exit 1; }

echo "== 2. a customer (JSON body)" >&2
call 201 POST /customers -H 'Content-Type: application/json' \
  -d '{"company_name":"Walkthrough Outfitters","city":"Portland","country":"US"}'
CUSTOMER=$(id_of "$body")

echo "== 3. a store (form body with bracket notation)" >&2
call 201 POST /stores \
  --data-urlencode "customer_id=$CUSTOMER" \
  --data-urlencode 'name=Walkthrough Shop' \
  --data-urlencode 'description=Our BigCommerce store' \
  --data-urlencode 'platform=bigcommerce' \
  --data-urlencode 'adapter[access_token]=walkthrough-access-token-1234' \
  --data-urlencode 'adapter[store_hash]=abc123'
STORE=$(id_of "$body")

echo "== 4. a warehouse" >&2
call 201 POST /warehouses -H 'Content-Type: application/json' \
  -d "{\"customer_id\":$CUSTOMER,\"name\":\"Main DC\",\"description\":\"SFTP drop\",\"platform\":\"sftp\",\"adapter\":{\"connection_string\":\"sftp://dc:dc-password@127.0.0.1:2222/orders\"}}"
WAREHOUSE=$(id_of "$body")

echo "== 5. a connection between them (its sales channel comes with it, disabled)" >&2
call 201 POST /connections -H 'Content-Type: application/json' \
  -d "{\"name\":\"Shop to DC\",\"customer_id\":$CUSTOMER,\"store_id\":$STORE,\"warehouse_id\":$WAREHOUSE}"
CONNECTION=$(id_of "$body")

echo "== 6. enable the connection, the store and the channel" >&2
call 204 PATCH "/connections/$CONNECTION" -H 'Content-Type: application/json' -d '{"enabled_at":"now"}'
call 204 PATCH "/stores/$STORE" --data-urlencode 'enabled_at=now'
call 200 GET "/connections/$CONNECTION/channels"
CHANNEL=$(id_of "$body")
call 204 PATCH "/connections/$CONNECTION/channels/$CHANNEL" -H 'Content-Type: application/json' \
  -d '{"enabled_at":"2026-01-01T00:00:00Z"}'

echo "== 7. what it all looks like now (adapter secrets come back masked)" >&2
call 200 GET "/stores/$STORE"
call 200 GET "/connections/$CONNECTION"
call 200 GET "/connections/$CONNECTION/channels"

echo "== 8. disable the channel again (null disables)" >&2
call 204 PATCH "/connections/$CONNECTION/channels/$CHANNEL" -H 'Content-Type: application/json' \
  -d '{"enabled_at":null}'

echo "== 9. orders and shipments (page mode, then a session)" >&2
call 200 GET "/orders?page=1&limit=2"
call 200 GET "/shipments?limit=2"

echo "walkthrough complete: customer $CUSTOMER, store $STORE, warehouse $WAREHOUSE, connection $CONNECTION" >&2
