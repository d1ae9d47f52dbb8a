-- POSTs one prepared body per request, each used once (one per line in BODIES): refresh tokens
-- are single-use, like codes.
local shared = require "shared"
setup = shared.setup
function init(args)
  requests = shared.requests(os.getenv("BODIES"), function(body) return wrk.format("POST", nil, nil, body) end)
  next_request = 1
end
function request()
  local r = requests[next_request]
  next_request = next_request + 1
  return r or wrk.format("POST", nil, nil, "grant_type=refresh_token&refresh_token=exhausted")
end
