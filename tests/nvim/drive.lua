-- Drives agent-ls from Neovim 0.7 (Debian's), headless: start the server with the built-in
-- LSP client, send custom requests, answer the server's requests, write what happened as
-- JSON to $AGENT_LS_NVIM_OUT, stop the server and quit.
--
--   AGENT_LS_NVIM_CMD   JSON array: the server command
--   AGENT_LS_NVIM_ROOT  the workspace folder
--   AGENT_LS_NVIM_OUT   where to write the report
local out_path = os.getenv("AGENT_LS_NVIM_OUT")
local report = { steps = {}, events = {}, approvals = {}, errors = {} }

local function finish(code)
  local f = io.open(out_path, "w")
  f:write(vim.fn.json_encode(report))
  f:close()
  vim.cmd(code == 0 and "qa!" or "cq!")
end

local function fail(msg)
  table.insert(report.errors, msg)
  finish(1)
end

local ok, err = pcall(function()
  local cmd = vim.fn.json_decode(os.getenv("AGENT_LS_NVIM_CMD"))
  local root = os.getenv("AGENT_LS_NVIM_ROOT")
  local client_id = vim.lsp.start_client({
    name = "agent-ls",
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = "ws" } },
    handlers = {
      ["agent/event"] = function(_, params)
        table.insert(report.events, params.event.type)
      end,
      ["mcp/statusChanged"] = function() end,
      ["agent/approve"] = function(_, params)
        table.insert(report.approvals, params.tool)
        return { answer = "allow_once" }
      end,
      ["mcp/trustServer"] = function()
        return { trusted = false }
      end,
      ["mcp/elicit"] = function()
        return { action = "decline" }
      end,
    },
  })
  if not client_id then
    return fail("start_client returned nil")
  end
  local client = vim.lsp.get_client_by_id(client_id)
  if not vim.wait(20000, function() return client.initialized end, 20) then
    return fail("the server did not initialize")
  end
  report.server_name = client.server_capabilities and "initialized"
  table.insert(report.steps, "initialized")

  -- A custom request; poll until the MCP server is connected.
  local function request(method, params, timeout)
    local done, res, rerr = false, nil, nil
    client.request(method, params, function(e, r)
      done, res, rerr = true, r, e
    end)
    if not vim.wait(timeout or 30000, function() return done end, 10) then
      error("no answer to " .. method)
    end
    return res, rerr
  end

  local state = nil
  vim.wait(30000, function()
    local status = request("mcp/status", vim.empty_dict())
    for _, s in ipairs(status.servers) do
      if s.name == "knob" then state = s.state end
    end
    return state == "connected"
  end, 100)
  report.knob_state = state
  table.insert(report.steps, "status")

  local echo = request("mcp/callTool", { server = "knob", tool = "echo", arguments = { text = "hello from nvim" } })
  report.echo = echo.content
  local _, bad = request("mcp/setEnabled", { server = "knob" })
  report.bad_params = bad and { code = bad.code, message = bad.message } or vim.NIL
  local prompt = request("agent/prompt", { text = "hi from neovim" }, 60000)
  report.prompt = { text = prompt.text, stopReason = prompt.stopReason }
  table.insert(report.steps, "prompt")

  client.stop()
  if not vim.wait(20000, function() return client.is_stopped() end, 20) then
    return fail("the server did not stop")
  end
  table.insert(report.steps, "stopped")
  finish(0)
end)
if not ok then
  fail(tostring(err))
end
