-- Drives agent-ls from Neovim 0.7 (Debian's), headless: start the server with the built-in
-- LSP client, send custom requests, answer the server's requests, write what happened as
-- JSON to $AGENT_LS_NVIM_OUT, stop the server and quit.
--
--   AGENT_LS_NVIM_CMD   JSON array: the server command
--   AGENT_LS_NVIM_ROOT  the workspace folder
--   AGENT_LS_NVIM_OUT   where to write the report
--   AGENT_LS_NVIM_FOLDER another folder, added with vim.lsp.buf.add_workspace_folder()
--
-- The workspace asks for trust: Neovim has no agent/trustWorkspace, so the server asks with
-- window/showMessageRequest; the answers are taken in order from `message_answers`.
local out_path = os.getenv("AGENT_LS_NVIM_OUT")
local report = { steps = {}, events = {}, approvals = {}, errors = {}, message_requests = {}, messages = {} }
local message_answers = { "Show what it wants", "Keep restricted", "Trust" }

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
      ["window/showMessageRequest"] = function(_, params)
        local titles = {}
        for _, a in ipairs(params.actions or {}) do table.insert(titles, a.title) end
        table.insert(report.message_requests, { message = params.message, actions = titles })
        local answer = table.remove(message_answers, 1)
        return answer and { title = answer } or vim.NIL
      end,
      ["window/showMessage"] = function(_, params)
        table.insert(report.messages, params.message)
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

  -- Neovim 0.7.2's add_workspace_folder() sends `removed: [{}]` with the added folder.
  local folder = os.getenv("AGENT_LS_NVIM_FOLDER")
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/notes.txt"))
  vim.lsp.buf_attach_client(0, client_id)
  vim.lsp.buf.add_workspace_folder(folder)
  vim.wait(10000, function()
    local info = request("agent/serverInfo", vim.empty_dict())
    report.workspace_folders = info.workspaceFolders
    return #info.workspaceFolders == 2
  end, 100)
  table.insert(report.steps, "folder added")

  -- The trust question came at start (Show what it wants, then Keep restricted); the command
  -- asks again, and "Trust" starts the folder's server.
  vim.wait(10000, function() return #report.message_requests >= 2 end, 50)
  local trusted, terr = request("workspace/executeCommand", { command = "agent-ls.trustWorkspace", arguments = {} })
  report.trust_command = trusted or vim.NIL
  report.trust_command_error = terr and terr.message or vim.NIL
  local wsknob = nil
  vim.wait(30000, function()
    for _, s in ipairs(request("mcp/status", vim.empty_dict()).servers) do
      if s.name == "wsknob" then wsknob = s.state end
    end
    return wsknob == "connected"
  end, 100)
  report.wsknob_state = wsknob
  table.insert(report.steps, "trusted")

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
