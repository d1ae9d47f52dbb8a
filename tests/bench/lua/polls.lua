-- POSTs one prepared body per request, each used once (one per line in BODIES), and counts the
-- answers that are not EXPECT_STATUS with EXPECT_BODY in them: a case whose every answer is a
-- refusal by design (a device poll that finds nothing is 400 authorization_pending).
local shared = require "shared"
shared.expect_refusals()
function init(args)
  local requests = shared.requests(os.getenv("BODIES"), function(body) return wrk.format("POST", nil, nil, body) end)
  send = shared.once_each(requests, wrk.format("POST", nil, nil, "grant_type=exhausted"))
end
function request()
  return send()
end
