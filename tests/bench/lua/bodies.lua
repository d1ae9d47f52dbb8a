-- POSTs one prepared body per request, each used once (one per line in BODIES): refresh tokens
-- are single-use, like codes.
local shared = require "shared"
setup = shared.setup
function init(args)
  local requests = shared.requests(os.getenv("BODIES"), function(body) return wrk.format("POST", nil, nil, body) end)
  send = shared.once_each(requests, wrk.format("POST", nil, nil, "grant_type=refresh_token&refresh_token=exhausted"))
end
-- Defined at the top level: wrk decides from its main state whether a script makes requests.
function request()
  return send()
end
