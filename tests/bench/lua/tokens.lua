-- A request with a bearer token drawn at random from the first COUNT lines of TOKENS, so the
-- working set is COUNT distinct tokens (or users); a request costs wrk one random number.
-- GET by default; METHOD, BODY and CONTENT_TYPE make it a POST.
local shared = require "shared"
setup = shared.setup
function init(args)
  local method, body, contentType = os.getenv("METHOD") or "GET", os.getenv("BODY"), os.getenv("CONTENT_TYPE")
  requests = shared.requests(os.getenv("TOKENS"), function(token)
    local headers = { Authorization = "Bearer " .. token }
    if contentType then headers["Content-Type"] = contentType end
    return wrk.format(method, nil, headers, body)
  end, tonumber(os.getenv("COUNT")))
  math.randomseed(os.time() + id)
end
function request()
  return requests[math.random(#requests)]
end
