-- GET with a bearer token drawn at random from the first COUNT lines of TOKENS, so the working
-- set is COUNT distinct tokens; a request costs wrk one random number.
local shared = require "shared"
setup = shared.setup
function init(args)
  requests = shared.requests(os.getenv("TOKENS"), function(token)
    return wrk.format("GET", nil, { Authorization = "Bearer " .. token })
  end, tonumber(os.getenv("COUNT")))
  math.randomseed(os.time() + id)
end
function request()
  return requests[math.random(#requests)]
end
