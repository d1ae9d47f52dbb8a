-- A forward-auth check with a site cookie drawn at random from the first COUNT lines of COOKIES
-- (each line a cookie value), so the working set is COUNT distinct site sessions; the forwarded
-- headers given with -H go with every request. ORDER=each-then-random (a warm-up): each cookie
-- once, in order (every thread its share), then at random.
local shared = require "shared"
setup = shared.setup
function init(args)
  local name = os.getenv("COOKIE_NAME")
  requests = shared.requests(os.getenv("COOKIES"), function(value)
    local headers = {}
    for k, v in pairs(wrk.headers) do headers[k] = v end
    headers["Cookie"] = name .. "=" .. value
    return wrk.format("GET", nil, headers)
  end, tonumber(os.getenv("COUNT")))
  math.randomseed(os.time() + id)
end
local next_request = 1
local in_order = os.getenv("ORDER") == "each-then-random"
function request()
  if in_order and next_request <= #requests then
    next_request = next_request + 1
    return requests[next_request - 1]
  end
  return requests[math.random(#requests)]
end
