# First steps, on the embedded sandbox cloud. Start the server in another terminal with an operator key:
#   OPERATOR_KEYS=first-steps-operator-key npm start
# then paste this into bash (or run `bash docs/first-steps.sh`). It needs curl, and node to read the answers.
BASE=${BASE:-http://localhost:8080}
OPERATOR_KEY=${OPERATOR_KEY:-first-steps-operator-key}   # one of the server's OPERATOR_KEYS
[[ $- == *i* ]] || set -euo pipefail                      # run as a script: stop at the first failure
json() { node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8'))$1"; }   # one field of the JSON on stdin
call() {                                  # one request: its answer is shown (on stderr) and returned (on stdout)
  local answer status=0
  answer=$(curl -sS --fail-with-body -H 'content-type: application/json' "$@") || status=$?
  printf '%s\n' "$answer" >&2
  printf '%s' "$answer"
  return "$status"
}

# a tenant, and its bootstrap secret (shown once, valid 24 h)
TENANT=$(call -XPOST "$BASE/v1/tenants" -d '{"name":"acme"}')
TENANT_ID=$(json .id <<<"$TENANT")

# exchange the secret for a root token with every scope (the default scope is read)
ROOT=$(call -XPOST "$BASE/v1/tokens" -d @- <<EOF | json .token
{"tenant_id": "$TENANT_ID", "bootstrap_secret": "$(json .bootstrap_secret <<<"$TENANT")",
 "scopes": ["read", "rent", "manage", "billing"]}
EOF
)

# hand an agent a token that can rent but never commit more than $25, for rentals of at most 8 hours
AGENT=$(call -XPOST "$BASE/v1/tokens" -H "authorization: Bearer $ROOT" \
  -d '{"name":"agent","scopes":["read","rent"],"spend_limit_usd":"25.00","max_rental_hours":8}' | json .token)

# the agent searches: 8 x H100 at most $2.50 per GPU-hour, on hosts with reliability >= 0.99, cheapest first;
# it takes the cheapest node whose price the provider has verified
SEARCH=$(call "$BASE/v1/gpus?gpu_type=H100&gpu_count=8&max_price_per_gpu_hour=2.5&extra_filters=reliability>=0.99&limit=3" \
  -H "authorization: Bearer $AGENT")
NODE=$(json '.nodes.find((node) => node.price_verified).id' <<<"$SEARCH")

# an operator funds the tenant with $50
call -XPOST "$BASE/v1/operator/tenants/$TENANT_ID/credit" -H "x-service-operator-key: $OPERATOR_KEY" \
  -d '{"amount_usd":"50.00","reason":"first funds"}' >/dev/null

# the SSH key the machine will accept: yours, or a throwaway one made for this walk-through
SSH_KEY_FILE=${SSH_KEY_FILE:-$HOME/.ssh/id_ed25519.pub}
if [[ ! -r $SSH_KEY_FILE ]]; then
  SSH_KEY_FILE=$(mktemp -d)/first-steps
  ssh-keygen -q -t ed25519 -N '' -C first-steps -f "$SSH_KEY_FILE"
  SSH_KEY_FILE=$SSH_KEY_FILE.pub
fi

# the agent rents exactly that node for one hour (within its $25 cap: 8 GPUs x $2.50 at most);
# retrying with the same idempotency_key never rents twice
INSTANCE_ID=$(call -XPOST "$BASE/v1/instances" -H "authorization: Bearer $AGENT" -d @- <<EOF | json .id
{"node_id": "$NODE", "name": "trainer", "ssh_public_key": "$(cat "$SSH_KEY_FILE")",
 "termination_hours": 1, "idempotency_key": "first-steps-$TENANT_ID"}
EOF
)

# wait while it starts (the sandbox takes 20 s), then show it: ssh_host and ssh_port say where to log in
for _ in {1..40}; do
  STATUS=$(call "$BASE/v1/instances/$INSTANCE_ID" -H "authorization: Bearer $AGENT" 2>/dev/null | json .status)
  [[ $STATUS == provisioning ]] || break
  sleep 2
done
call "$BASE/v1/instances/$INSTANCE_ID" -H "authorization: Bearer $AGENT" >/dev/null

# the account: balance, owed, available, burn, stops_at
call "$BASE/v1/billing/account" -H "authorization: Bearer $ROOT" >/dev/null

# terminate it: the first hour stays charged, unused time after it would be refunded
call -XPOST "$BASE/v1/instances/$INSTANCE_ID/terminate" -H "authorization: Bearer $AGENT" >/dev/null
echo "rented $NODE as $INSTANCE_ID ($STATUS), then terminated it"
