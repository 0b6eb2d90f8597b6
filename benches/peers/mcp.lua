-- wrk script: MCP `tools/call` of the fight example's tool (Lion against Tiger) over streamable
-- HTTP at /mcp; counts the answers that are not the verdict (a status other than 200, a JSON-RPC
-- error, a tool error).
--
-- With MCP_SESSION set (a session id, from an `initialize` made before): the call in that
-- session, protocol 2025-06-18. Without: a self-contained 2026-07-28 call (no session).
local session = os.getenv("MCP_SESSION")
wrk.method = "POST"
wrk.path = "/mcp"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
local arguments = '"name":"fight-comparison","arguments":{"a":"Lion","b":"Tiger"}'
local params
if session and session ~= "" then
  wrk.headers["Mcp-Session-Id"] = session
  wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
  params = '{' .. arguments .. '}'
else
  wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
  wrk.headers["Mcp-Method"] = "tools/call"
  wrk.headers["Mcp-Name"] = "fight-comparison"
  params = '{' .. arguments
    .. ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}}'
end
-- Each request its own id: a session's requests never reuse one (the rounds of one session
-- each start from a random prefix).
math.randomseed(os.time() + math.floor(os.clock() * 1000000))
local prefix = "r" .. math.random(1, 1000000000) .. "-"
local n = 0
request = function()
  n = n + 1
  local body = '{"jsonrpc":"2.0","id":"' .. prefix .. n .. '","method":"tools/call","params":' .. params .. '}'
  return wrk.format(nil, nil, nil, body)
end
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end
bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"winner":%s*"Tiger"')
      or string.find(body, '"isError":%s*true') or string.find(body, '"error":%s*{') then
    bad = bad + 1
    if bad == 1 then
      io.stderr:write("the first answer that was not the verdict: " .. status .. " " .. body:sub(1, 400) .. "\n")
    end
  end
end
done = function(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + (t:get("bad") or 0) end
  io.write(string.format("not-answered: %d\n", total))
end
