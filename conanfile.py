# Conan 2 recipe for hookset (header-only).
#
#   conan create .                         # package it and run test_package/
#   conan install --requires=hookset/0.1.0 # then, in CMake:
#       find_package(hookset CONFIG REQUIRED)
#       target_link_libraries(app PRIVATE hookset::hookset)
#
# The version comes from the project() line of CMakeLists.txt. The names package_info() declares
# (CMake file name, target, pkg-config name) are the ones the CMake install also provides, so a
# consumer's CMakeLists.txt does not depend on how hookset reached it; tests/consumers/ builds
# test_package/ against a CMake install to keep them in step.
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class HooksetConan(ConanFile):
    name = "hookset"
    description = "Named, typed, pluggable async function slots for C++20"
    license = "BSL-1.0"  # the Boost Software License 1.0: LICENSE, packaged in licenses/
    url = "https://github.com/hookset/hookset"
    homepage = "https://github.com/hookset/hookset"
    topics = ("hooks", "plugins", "coroutines", "header-only")
    package_type = "header-library"
    # Only to check the C++ standard in validate(); package_id() drops them again.
    settings = "os", "arch", "compiler", "build_type"
    # with_asio: the optional Boost.Asio adapter (<hookset/asio.hpp>) needs Boost >= 1.81 (C++20
    # coroutines in Asio); the core alone works with Boost >= 1.74.
    options = {"with_asio": [True, False]}
    default_options = {"with_asio": True}
    exports_sources = "include/*", "cmake/hooksetPlugin.cmake", "LICENSE"
    no_copy_source = True

    def set_version(self):
        cmakelists = load(self, os.path.join(self.recipe_folder, "CMakeLists.txt"))
        match = re.search(r"project\(\s*hookset\s+VERSION\s+([0-9][0-9.]*)", cmakelists)
        if not match:
            raise ValueError("conanfile.py: no 'project(hookset VERSION x.y.z' in CMakeLists.txt")
        self.version = match.group(1)

    def layout(self):
        basic_layout(self)

    def requirements(self):
        # Boost.Hana and Boost.Mp11 (and Asio for the adapter), headers only; hookset's public
        # headers include them.
        if self.options.with_asio:
            self.requires("boost/[>=1.81 <2]", transitive_headers=True)
        else:
            self.requires("boost/[>=1.74 <2]", transitive_headers=True)

    def package_id(self):
        self.info.clear()  # one package for every configuration: nothing is compiled

    def validate(self):
        check_min_cppstd(self, 20)

    def build(self):
        pass  # header-only

    def package(self):
        # The license goes to licenses/, where Conan (and ConanCenter's checks) look for it.
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        # hookset_add_plugin / hookset_plugin_host, loaded with the CMake package (package_info).
        copy(self, "hooksetPlugin.cmake", os.path.join(self.source_folder, "cmake"),
             os.path.join(self.package_folder, "lib", "cmake", "hookset"))
        for pattern in ("*.hpp", "*.ipp"):  # (.ipp: the code of include/hookset/impl/)
            copy(self, pattern, os.path.join(self.source_folder, "include"),
                 os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "hookset")
        self.cpp_info.set_property("cmake_target_name", "hookset::hookset")
        self.cpp_info.set_property("pkg_config_name", "hookset")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.requires = ["boost::headers"]
        self.cpp_info.builddirs = [os.path.join("lib", "cmake", "hookset")]
        self.cpp_info.set_property("cmake_build_modules",
                                   [os.path.join("lib", "cmake", "hookset", "hooksetPlugin.cmake")])
