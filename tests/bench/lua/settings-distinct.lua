-- POST /api/settings with a new key on every request (upsert creating rows).
local shared = require "shared"
setup = shared.setup
local counter = 0
function init(args)
  client = os.getenv("CLIENT_ID")
end
function request()
  counter = counter + 1
  local body = '{"client_id":"' .. client .. '","key":"k' .. id .. '-' .. counter .. '","value":{"n":' .. counter .. ',"tags":["a","b"]}}'
  return wrk.format("POST", "/api/settings", nil, body)
end
