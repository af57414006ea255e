# scripts/install.mk: make install and make uninstall, included by the Makefile.

# ---- install ----
PREFIX  ?= /usr/local
DESTDIR ?=
INST    := $(DESTDIR)$(PREFIX)
HEADERS := $(wildcard runtime/include/nnn/*.h)
# Installed under share/doc/nnnkit: README.md, and docs/ with the generated
# references (which a build from a schema copy writes under $(O)/docs).
DOCS    := $(sort $(filter-out docs/format.md docs/schema-language.md,$(wildcard docs/*.md)) $(DOC) $(LANG_DOC))
# pkg-config modules: libnnn for programs using the library; nnnkit-plugin
# for plugins, which never link libnnn (docs/plugins.md: the build line). Its
# -Wno-missing-field-initializers keeps an info filled positionally as the
# docs said before ABI 1.2 building under -Wextra -Werror: the schema_layout
# it leaves 0 is stamped by the entry point's name (ABI 1.7).
PC_VARS := 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' \
	'plugindir=$${prefix}/lib/nnnkit/plugins' 'nnngen=$${prefix}/bin/nnngen' ''

# The Python package (python/nnnkit), where that Python finds packages under
# PREFIX (scripts/pysite.py: for Debian's python3 and /usr/local,
# lib/python3.11/dist-packages), compiled; it finds PREFIX/lib/libnnn.so.1 and
# PREFIX/lib/nnnkit/plugins from there. PYTHON (above) names the Python.
PY_SRC  := $(wildcard python/nnnkit/*.py)

# The examples the docs point at (sources only), under share/doc/nnnkit/examples.
EXAMPLES := $(wildcard examples/*/*.c examples/*/*.lua examples/*/*.py examples/*/*.md examples/*/Makefile)

# scripts/install.sh installs each file and records it, and every folder it
# made, in PREFIX/share/nnnkit/installed-files; uninstall removes exactly
# those, then the folders it made that are left empty. A file someone else
# put in a folder of ours (a plugin in lib/nnnkit/plugins) stays, and so
# does its folder.
INSTALL_SH := scripts/install.sh
install: all
	$(Q)$(INSTALL_SH) begin $(INST)
	$(Q)$(INSTALL_SH) file $(INST) 0755 bin $(NNNKIT)
	$(Q)$(INSTALL_SH) file $(INST) 0644 lib $(LIB_A)
	$(Q)$(INSTALL_SH) file $(INST) 0755 lib $(LIB_SO)
	$(Q)$(INSTALL_SH) link $(INST) libnnn.so.$(SOVERSION) lib/libnnn.so
	$(Q)$(INSTALL_SH) file $(INST) 0644 include/nnn $(HEADERS) $(GEN_H) $(GEN_RH)
	@# The rpath: a program linked against any prefix starts without
	@# LD_LIBRARY_PATH or ldconfig (issue 33).
	$(Q)printf '%s\n' $(PC_VARS) \
		'Name: libnnn' 'Description: read, check, write and run .nnn models' 'Version: $(VERSION)' \
		'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lnnn' \
		'Libs.private: -ljansson -lprotobuf-c -lm' \
		| $(INSTALL_SH) text $(INST) 0644 lib/pkgconfig/libnnn.pc
	$(Q)printf '%s\n' $(PC_VARS) \
		'Name: nnnkit-plugin' 'Description: build an nnnkit plugin (a shared object that never links libnnn)' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir} -fPIC -fvisibility=hidden -Wno-missing-field-initializers' \
		'Libs: -shared -Wl,--no-undefined -lm' | $(INSTALL_SH) text $(INST) 0644 lib/pkgconfig/nnnkit-plugin.pc
# gen/ keeps its folders: nnngen.lua finds its modules beside it.
	$(Q)$(foreach d,$(sort $(dir $(GEN_LUA))),\
		$(INSTALL_SH) file $(INST) 0644 share/nnnkit/$(d:/=) $(foreach f,$(GEN_LUA),$(if $(filter $(d),$(dir $(f))),$(f))) &&) true
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/schema $(SCHEMA) $(LOCK)
	$(Q)printf '#!/bin/sh\nexec lua5.4 "%s/share/nnnkit/gen/nnngen.lua" "$$@"\n' '$(PREFIX)' \
		| $(INSTALL_SH) text $(INST) 0755 bin/nnngen
	$(Q)$(INSTALL_SH) file $(INST) 0755 lib/nnnkit/plugins $(PLUGINS)
	$(Q)$(INSTALL_SH) file $(INST) 0755 lib/nnnkit $(SCANNER)
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/conformance $(CONFORMANCE)/manifest.json
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/conformance/valid $(CONFORMANCE)/valid/*.nnn
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/conformance/invalid $(CONFORMANCE)/invalid/*.nnn
	@# the corpus installed is the kit unpacked (its runner runs it where it is), and the tarball beside it
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/conformance/io $(CONFORMANCE)/io/*.npy
	$(Q)$(INSTALL_SH) file $(INST) 0755 share/nnnkit/conformance conformance/nnn_conformance.py
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/conformance conformance/README.md
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit $(KIT)
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/man/man1 $(O)/nnnkit.1 $(O)/nnngen.1
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/doc/nnnkit README.md
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/doc/nnnkit/docs $(DOCS)
	$(Q)$(foreach d,$(sort $(dir $(EXAMPLES))),\
		$(INSTALL_SH) file $(INST) 0644 share/doc/nnnkit/$(d:/=) $(filter $(d)%,$(EXAMPLES)) &&) true
	$(Q)$(INSTALL_SH) as $(INST) 0644 $(O)/nnnkit.bash share/bash-completion/completions/nnnkit
	@# The C# target: the assembly and its tool side by side (mono finds
	@# Nnn.dll beside nnn-cs.exe, and Nnn.dll.config maps its P/Invoke
	@# library to the prefix's libnnn), and the Unity package (docs/csharp.md).
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/csharp $(CS_DLL) $(CS_EXE)
	$(Q)printf '<configuration>\n  <dllmap dll="nnn" target="%s"/>\n</configuration>\n' '$(PREFIX)/lib/libnnn.so.$(SOVERSION)' \
		| $(INSTALL_SH) text $(INST) 0644 share/nnnkit/csharp/Nnn.dll.config
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/csharp/package $(CS_PKG)/package.json $(CS_PKG)/README.md
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/csharp/package/Runtime $(CS_PKG)/Runtime/*
	$(Q)pydir=$$($(PYTHON) scripts/pysite.py) && $(INSTALL_SH) file $(INST) 0644 $$pydir/nnnkit $(PY_SRC) && \
		$(INSTALL_SH) pyc $(INST) $(PYTHON) $$pydir/nnnkit $(PREFIX)
	$(Q)$(INSTALL_SH) end $(INST)
	@echo "installed under $(INST) (the list: $(INST)/share/nnnkit/installed-files)"

uninstall:
	$(Q)$(INSTALL_SH) uninstall $(INST)
