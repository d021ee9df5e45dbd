#!/usr/bin/env python3
"""python3 check_conan_recipe.py <hookset source dir> <scratch dir>

CTest `conan/recipe`. The Conan client is not available where hookset's tests run, so this checks
what can be checked without it:

1. conanfile.py and test_package/conanfile.py byte-compile (py_compile, into the scratch dir).
2. Both recipes load against a small stand-in of the Conan 2 API: only the names they use, with
   the real signatures (an import of anything else fails), recording what the recipe asks for.
3. Each method of the recipe is called as `conan create` would, and its effects are checked:
   license BSL-1.0 with url and homepage, version taken from CMakeLists.txt, Boost required with
   transitive headers, one package id, C++20 checked, exactly the public headers packaged and
   LICENSE in licenses/, the CMake/pkg-config names and boost::headers declared. test_package requires the tested reference, uses CMakeDeps +
   CMakeToolchain + cmake_layout, and runs the test_package program.

It does not prove the recipe works with a real Conan (that needs `conan create .`), but it keeps
the recipe consistent with the CMake package that tests/consumers/ installs and consumes.
"""
import fnmatch
import importlib.util
import os
import py_compile
import re
import shutil
import sys
import types

failures = []


def check(condition, what):
    print(("ok:    " if condition else "WRONG: ") + what)
    if not condition:
        failures.append(what)


# ---- a stand-in of the Conan 2 API (conan 2.x names and signatures) -----------------------------
calls = []


class ConanInvalidConfiguration(Exception):
    pass


class _Info:
    def __init__(self):
        self.cleared = False

    def clear(self):
        self.cleared = True


class _CppInfo:
    def __init__(self):
        self.includedirs = ["include"]
        self.libdirs = ["lib"]
        self.bindirs = ["bin"]
        self.requires = []
        self.properties = {}

    def set_property(self, name, value):
        self.properties[name] = value


class _Options:
    def __init__(self, defaults):
        for name, value in (defaults or {}).items():
            setattr(self, name, value)


class ConanFile:
    def __init__(self):
        self.options = _Options(getattr(type(self), "default_options", {}))
        self.info = _Info()
        self.cpp_info = _CppInfo()
        self.requirements_seen = []
        self.runs = []

    def requires(self, ref, **traits):
        self.requirements_seen.append((ref, traits))

    def run(self, command, env=None, **kwargs):
        self.runs.append((command, env))


def check_min_cppstd(conanfile, cppstd, gnu_extensions=False):
    calls.append(("check_min_cppstd", int(cppstd)))


def can_run(conanfile):
    return True


def copy(conanfile, pattern, src, dst, keep_path=True, excludes=None, ignore_case=True,
         overwrite_equal=False):
    copied = []
    for root, _dirs, files in os.walk(src):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), src).replace(os.sep, "/")
            if fnmatch.fnmatchcase(rel.lower() if ignore_case else rel,
                                   pattern.lower() if ignore_case else pattern):
                target = os.path.join(dst, rel if keep_path else name)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(os.path.join(root, name), target)
                copied.append(target)
    return copied


def load(conanfile, path, encoding="utf-8"):
    with open(path, encoding=encoding) as f:
        return f.read()


def basic_layout(conanfile, src_folder=".", build_folder=None):
    calls.append(("basic_layout", src_folder))


def cmake_layout(conanfile, generator=None, src_folder=".", build_folder="build"):
    calls.append(("cmake_layout", src_folder))


class CMake:
    def __init__(self, conanfile):
        pass

    def configure(self, variables=None, build_script_folder=None, cli_args=None, stdout=None, stderr=None):
        calls.append(("CMake.configure",))

    def build(self, build_type=None, target=None, cli_args=None, build_tool_args=None, stdout=None, stderr=None):
        calls.append(("CMake.build",))


def install_stand_in():
    def module(name, **names):
        mod = types.ModuleType(name)
        mod.__dict__.update(names)
        sys.modules[name] = mod
        return mod

    module("conan", ConanFile=ConanFile, __path__=[])
    module("conan.errors", ConanInvalidConfiguration=ConanInvalidConfiguration)
    module("conan.tools", __path__=[])
    module("conan.tools.build", check_min_cppstd=check_min_cppstd, can_run=can_run)
    module("conan.tools.files", copy=copy, load=load)
    module("conan.tools.layout", basic_layout=basic_layout)
    module("conan.tools.cmake", CMake=CMake, cmake_layout=cmake_layout)


def load_recipe(path, module_name, label):
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recipes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, ConanFile) and v is not ConanFile]
    check(len(recipes) == 1, f"{label} defines one ConanFile subclass")
    return module, recipes[0]


def main():
    source_dir, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    recipe_path = os.path.join(source_dir, "conanfile.py")
    test_recipe_path = os.path.join(source_dir, "test_package", "conanfile.py")

    # 1. Byte-compile (into the scratch dir: no __pycache__ in the source tree).
    for i, path in enumerate((recipe_path, test_recipe_path)):
        py_compile.compile(path, cfile=os.path.join(scratch, f"recipe{i}.pyc"), doraise=True)
        check(True, f"py_compile {os.path.relpath(path, source_dir)}")

    install_stand_in()

    # 2. The recipe.
    module, Recipe = load_recipe(recipe_path, "hookset_conanfile", "conanfile.py")
    check(getattr(module, "required_conan_version", "").startswith(">=2"), "required_conan_version >=2")
    check(Recipe.name == "hookset", "name is hookset")
    check(Recipe.package_type == "header-library", "package_type is header-library")
    check(getattr(Recipe, "no_copy_source", False) is True, "no_copy_source")
    exports = Recipe.exports_sources
    exports = (exports,) if isinstance(exports, str) else tuple(exports)
    check("include/*" in exports, "exports_sources has include/*")
    check(any(fnmatch.fnmatchcase("LICENSE", pattern) for pattern in exports),
          "exports_sources exports LICENSE")
    check(getattr(Recipe, "license", None) == "BSL-1.0", "license is BSL-1.0 (the SPDX name)")
    for attribute in ("url", "homepage"):
        value = getattr(Recipe, attribute, None)
        check(isinstance(value, str) and value.startswith("https://"),
              f"{attribute} is an https URL ({value})")
    check(os.path.isfile(os.path.join(source_dir, "LICENSE")), "LICENSE exists at the source root")

    recipe = Recipe()
    recipe.recipe_folder = source_dir
    recipe.source_folder = source_dir
    recipe.package_folder = os.path.join(scratch, "package")

    recipe.set_version()
    with open(os.path.join(source_dir, "CMakeLists.txt"), encoding="utf-8") as f:
        cmake_version = re.search(r"project\(\s*hookset\s+VERSION\s+([0-9.]+)", f.read()).group(1)
    check(recipe.version == cmake_version, f"version {recipe.version} is CMakeLists.txt's {cmake_version}")

    recipe.layout()
    check(("basic_layout", ".") in calls, "layout: basic_layout with the sources at the recipe's root")

    # The core alone works with Boost >= 1.74; the Asio adapter (option with_asio, on by default)
    # needs >= 1.81.
    for with_asio, minimum in ((False, "1.74"), (True, "1.81")):
        recipe.requirements_seen = []
        recipe.options.with_asio = with_asio
        recipe.requirements()
        boost = [(ref, traits) for ref, traits in recipe.requirements_seen if ref.startswith("boost/")]
        check(len(recipe.requirements_seen) == 1 and len(boost) == 1,
              f"with_asio={with_asio}: requires boost and nothing else")
        if boost:
            ref, traits = boost[0]
            check(minimum in ref, f"with_asio={with_asio}: boost requirement {ref} starts at {minimum}")
            check(traits.get("transitive_headers") is True, "boost is required with transitive_headers=True")
    check(getattr(type(recipe), "default_options", {}).get("with_asio") is True, "with_asio is on by default")

    recipe.package_id()
    check(recipe.info.cleared, "package_id clears the info: one package for every configuration")

    recipe.validate()
    check(("check_min_cppstd", 20) in calls, "validate checks C++20 (check_min_cppstd(self, 20))")

    recipe.build()
    recipe.package()
    include = os.path.join(source_dir, "include")
    expected = sorted(os.path.relpath(os.path.join(root, f), include)
                      for root, _d, files in os.walk(include) for f in files
                      if f.endswith((".hpp", ".ipp")))
    packaged_include = os.path.join(recipe.package_folder, "include")
    packaged = sorted(os.path.relpath(os.path.join(root, f), packaged_include)
                      for root, _d, files in os.walk(packaged_include) for f in files)
    check(packaged == expected and "hookset/hookset.hpp" in packaged,
          f"package: include/ holds exactly the {len(expected)} headers and .ipp files")
    packaged_license = os.path.join(recipe.package_folder, "licenses", "LICENSE")
    same_license = False
    if os.path.isfile(packaged_license):
        with open(packaged_license, "rb") as a, open(os.path.join(source_dir, "LICENSE"), "rb") as b:
            same_license = a.read() == b.read()
    check(same_license, "package: licenses/LICENSE is the source tree's LICENSE")
    # The CMake functions that build plugins (cmake/hooksetPlugin.cmake), a build module.
    module = os.path.join("lib", "cmake", "hookset", "hooksetPlugin.cmake")
    packaged_module = os.path.join(recipe.package_folder, module)
    same_module = False
    if os.path.isfile(packaged_module):
        with open(packaged_module, "rb") as a, \
                open(os.path.join(source_dir, "cmake", "hooksetPlugin.cmake"), "rb") as b:
            same_module = a.read() == b.read()
    check(same_module, f"package: {module} is cmake/hooksetPlugin.cmake")
    packaged_lib = sorted(os.path.relpath(os.path.join(root, f), recipe.package_folder)
                          for root, _d, files in os.walk(os.path.join(recipe.package_folder, "lib"))
                          for f in files)
    check(packaged_lib == [module], f"package: lib/ holds the build module alone ({packaged_lib})")
    others = sorted(d for d in os.listdir(recipe.package_folder)
                    if d not in ("include", "licenses", "lib"))
    check(not others, f"package: nothing but include/, licenses/ and lib/cmake ({others or 'ok'})")

    recipe.package_info()
    props = recipe.cpp_info.properties
    check(props.get("cmake_file_name") == "hookset", "cmake_file_name hookset (find_package(hookset))")
    check(props.get("cmake_target_name") == "hookset::hookset", "cmake_target_name hookset::hookset")
    check(props.get("pkg_config_name") == "hookset", "pkg_config_name hookset")
    check(recipe.cpp_info.bindirs == [] and recipe.cpp_info.libdirs == [], "bindirs and libdirs empty")
    check(recipe.cpp_info.includedirs == ["include"], "includedirs is include")
    check(recipe.cpp_info.requires == ["boost::headers"], "cpp_info.requires is boost::headers")
    check(props.get("cmake_build_modules") == [module],
          "cmake_build_modules loads hooksetPlugin.cmake (hookset_add_plugin, hookset_plugin_host)")

    # 3. test_package.
    calls.clear()
    _module, TestRecipe = load_recipe(test_recipe_path, "hookset_test_package_conanfile",
                                       "test_package/conanfile.py")
    generators = TestRecipe.generators
    generators = (generators,) if isinstance(generators, str) else tuple(generators)
    check({"CMakeDeps", "CMakeToolchain"} <= set(generators), "test_package generators CMakeDeps, CMakeToolchain")
    test = TestRecipe()
    test.tested_reference_str = f"hookset/{recipe.version}"
    test.cpp = types.SimpleNamespace(build=types.SimpleNamespace(bindir="build/bin"))
    test.requirements()
    check([ref for ref, _t in test.requirements_seen] == [test.tested_reference_str],
          "test_package requires the tested reference")
    test.layout()
    check(any(c[0] == "cmake_layout" for c in calls), "test_package uses cmake_layout")
    test.build()
    check(("CMake.configure",) in calls and ("CMake.build",) in calls, "test_package configures and builds with CMake")
    test.test()
    check(len(test.runs) == 1 and test.runs[0][0].replace(os.sep, "/").endswith("/test_package"),
          "test_package runs its test_package program")
    for name in ("CMakeLists.txt", "test_package.cpp"):
        check(os.path.isfile(os.path.join(source_dir, "test_package", name)), f"test_package/{name} exists")

    print(f"{'FAIL' if failures else 'PASS'} conan/recipe: {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
