-- GET with a bearer token drawn at random from the first COUNT lines of TOKENS, so the working
-- set is COUNT distinct tokens. Each thread formats its share of the requests in init(), before
-- the clock starts; a request then costs wrk one random number.
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  local n = tonumber(os.getenv("THREADS"))
  local count = tonumber(os.getenv("COUNT"))
  requests = {}
  local i = 0
  for token in io.lines(os.getenv("TOKENS")) do
    if i >= count then break end
    if count < n or i % n == id then
      requests[#requests + 1] = wrk.format("GET", nil, { Authorization = "Bearer " .. token })
    end
    i = i + 1
  end
  math.randomseed(os.time() + id)
end
function request()
  return requests[math.random(#requests)]
end
