;;; mzk.el --- mzk, the language server for Mozaiks workflow bundles -*- lexical-binding: t -*-

;; Registers `mzk lsp' with eglot (built into Emacs 29, a package for 28) and
;; with lsp-mode, for the files of Mozaiks workflow bundles only: the bundle
;; YAML files and tools/*.py of a folder holding orchestrator.yaml.
;;
;; Usage:
;;   (add-to-list 'load-path "/path/to/mzk/editors/emacs")
;;   (require 'mzk)
;;   (add-hook 'mzk-bundle-mode-hook #'eglot-ensure)   ; or #'lsp-deferred

;;; Code:

(defgroup mzk nil
  "The mzk language server for Mozaiks workflow bundles."
  :group 'tools)

(defcustom mzk-command '("mzk" "lsp")
  "The command that starts the language server."
  :type '(repeat string))

(defcustom mzk-python-files nil
  "When non-nil, tools/*.py of bundles are opened in `mzk-python-mode' so eglot
uses mzk for them (navigation between the YAML and the Python functions)
instead of your Python server."
  :type 'boolean)

(defconst mzk-bundle-files
  '("orchestrator.yaml" "agents.yaml" "transition_graph.yaml" "context_variables.yaml"
    "tools.yaml" "structured_outputs.yaml" "middleware.yaml" "ui_config.yaml" "a2a.yaml"
    "extended_orchestration/task_batches.yaml")
  "The files of a bundle, relative to its folder.")

(defun mzk-bundle-of (file)
  "The bundle folder FILE belongs to, or nil."
  (when file
    (let* ((file (expand-file-name file))
           (dir (file-name-directory file)))
      (seq-some
       (lambda (candidate)
         (when (file-exists-p (expand-file-name "orchestrator.yaml" candidate))
           (let ((relative (file-relative-name file candidate)))
             (when (or (member relative mzk-bundle-files)
                       (string-match-p "\\`tools/[^/]+\\.py\\'" relative))
               candidate))))
       (list dir (file-name-directory (directory-file-name dir)))))))

;; yaml-mode when it is installed, else text-mode.
(defalias 'mzk--yaml-base-mode (if (fboundp 'yaml-mode) 'yaml-mode 'text-mode))

(define-derived-mode mzk-bundle-mode mzk--yaml-base-mode "mzk-bundle"
  "Major mode for the YAML files of a Mozaiks workflow bundle.")

(define-derived-mode mzk-python-mode python-mode "mzk-python"
  "Major mode for the Python tool files of a Mozaiks workflow bundle.")

(defun mzk--choose-mode ()
  "Switch a bundle file to the mzk mode for it."
  (when-let ((bundle (mzk-bundle-of buffer-file-name)))
    (if (string-suffix-p ".py" buffer-file-name)
        (when (and mzk-python-files (not (derived-mode-p 'mzk-python-mode)))
          (mzk-python-mode))
      (unless (derived-mode-p 'mzk-bundle-mode)
        (mzk-bundle-mode)))))

(add-hook 'find-file-hook #'mzk--choose-mode)

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               `(mzk-bundle-mode . ,(lambda (&rest _) mzk-command)))
  (add-to-list 'eglot-server-programs
               `(mzk-python-mode . ,(lambda (&rest _) mzk-command))))

(with-eval-after-load 'lsp-mode
  (add-to-list 'lsp-language-id-configuration '(mzk-bundle-mode . "yaml"))
  (add-to-list 'lsp-language-id-configuration '(mzk-python-mode . "python"))
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection (lambda () mzk-command))
    ;; An add-on: it runs beside yaml-language-server or a Python server.
    :activation-fn (lambda (file _mode) (and (mzk-bundle-of file) t))
    :add-on? t
    :server-id 'mzk)))

(provide 'mzk)
;;; mzk.el ends here
