-- mzk for Neovim: starts `mzk lsp` for the files of Mozaiks workflow bundles
-- (the bundle YAML files and tools/*.py of a folder holding orchestrator.yaml),
-- never for other YAML or Python files. Neovim 0.8+ uses vim.lsp.start; 0.7
-- falls back to vim.lsp.start_client + buf_attach_client.
--
--   require("mzk").setup({ cmd = { "mzk", "lsp" } })
--
-- Commands: :MzkGraph (the bundle's transition graph as Mermaid, in a split),
-- :MzkRun and :MzkRunFrom {agent} (run the workflow through the server).

local M = {}

M.config = {
  cmd = { "mzk", "lsp" },
}

-- The files of a bundle, relative to its folder.
local BUNDLE_FILES = {
  ["orchestrator.yaml"] = true,
  ["agents.yaml"] = true,
  ["transition_graph.yaml"] = true,
  ["context_variables.yaml"] = true,
  ["tools.yaml"] = true,
  ["structured_outputs.yaml"] = true,
  ["middleware.yaml"] = true,
  ["ui_config.yaml"] = true,
  ["a2a.yaml"] = true,
  ["extended_orchestration/task_batches.yaml"] = true,
}

local function is_file(path)
  return vim.fn.filereadable(path) == 1
end

--- The bundle folder of a file of a bundle, or nil.
function M.bundle_of(path)
  if path == nil or path == "" then
    return nil
  end
  path = vim.fn.fnamemodify(path, ":p")
  local dir = vim.fn.fnamemodify(path, ":h")
  for _, candidate in ipairs({ dir, vim.fn.fnamemodify(dir, ":h") }) do
    if is_file(candidate .. "/orchestrator.yaml") then
      local relative = path:sub(#candidate + 2)
      if BUNDLE_FILES[relative] or relative:match("^tools/[^/]+%.py$") then
        return candidate
      end
    end
  end
  return nil
end

local started = {} -- workflows root -> client id (the 0.7 path)

--- Attaches mzk to a buffer when it shows a bundle file.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local bundle = M.bundle_of(vim.api.nvim_buf_get_name(bufnr))
  if bundle == nil then
    return nil
  end
  -- One server per workflows root (the folder holding the bundles).
  local root = vim.fn.fnamemodify(bundle, ":h")
  local config = { name = "mzk", cmd = M.config.cmd, root_dir = root }
  if vim.lsp.start ~= nil then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = started[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(config)
    started[root] = id
  end
  if id ~= nil then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

local function client_for(bufnr)
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == "mzk" then
      return client
    end
  end
  return nil
end

--- Runs one of the server's commands for the current bundle; `on_result`
--- gets the result.
local function execute(command, extra, on_result)
  local bufnr = vim.api.nvim_get_current_buf()
  local bundle = M.bundle_of(vim.api.nvim_buf_get_name(bufnr))
  local client = client_for(bufnr)
  if bundle == nil or client == nil then
    vim.notify("mzk: this buffer is not a file of a bundle with mzk attached", vim.log.levels.WARN)
    return
  end
  local arguments = { bundle }
  for _, a in ipairs(extra or {}) do
    table.insert(arguments, a)
  end
  client.request("workspace/executeCommand", { command = command, arguments = arguments }, function(err, result)
    if err then
      vim.notify("mzk: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end, bufnr)
end

--- Opens the bundle's transition graph (Mermaid) in a scratch split.
function M.graph()
  execute("mzk.showGraph", {}, function(mermaid)
    vim.cmd("new")
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(mermaid or "", "\n"))
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].filetype = "mermaid"
  end)
end

function M.run()
  execute("mzk.runWorkflow", {})
end

function M.run_from(agent)
  execute("mzk.runFromAgent", { agent })
end

--- Registers the server with nvim-lspconfig (`require("lspconfig").mzk.setup{}`)
--- for those who manage servers through it.
function M.lspconfig()
  local ok, configs = pcall(require, "lspconfig.configs")
  if not ok then
    vim.notify("mzk: nvim-lspconfig is not installed", vim.log.levels.WARN)
    return
  end
  if configs.mzk == nil then
    configs.mzk = {
      default_config = {
        cmd = M.config.cmd,
        filetypes = { "yaml", "python" },
        root_dir = function(fname)
          local bundle = M.bundle_of(fname)
          return bundle and vim.fn.fnamemodify(bundle, ":h") or nil
        end,
        single_file_support = false,
      },
      docs = { description = "mzk: language server for Mozaiks workflow bundles" },
    }
  end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  local group = vim.api.nvim_create_augroup("mzk", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = { "yaml", "python" },
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_user_command("MzkGraph", M.graph, { desc = "mzk: show the transition graph" })
  vim.api.nvim_create_user_command("MzkRun", M.run, { desc = "mzk: run the workflow" })
  vim.api.nvim_create_user_command("MzkRunFrom", function(c)
    M.run_from(c.args)
  end, { nargs = 1, desc = "mzk: run the workflow from an agent" })
  -- Buffers opened before setup.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      local ft = vim.bo[bufnr].filetype
      if ft == "yaml" or ft == "python" then
        M.attach(bufnr)
      end
    end
  end
end

return M
