#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds and runs the consumer
# example against it three ways: the CMake package (shared and static
# library) and pkg-config. Finally runs the installed esmm tool.
#   install_consumer.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR C_COMPILER
set -euo pipefail
build=$1 source=$2 work=$3 libdir=$4 cc=$5
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/esmm.h "$libdir/libesmm.so" "$libdir/libesmm.a" bin/esmm \
         "$libdir/cmake/esmm/esmmConfig.cmake" "$libdir/pkgconfig/esmm.pc"; do
  [[ -e $prefix/$f ]] || { echo "not installed: $f"; exit 1; }
done

cmake -S "$source/examples/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" >"$work/consumer.log"
cmake --build "$work/consumer" >>"$work/consumer.log"
"$work/consumer/esmm_consumer"
"$work/consumer/esmm_consumer_static"

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
# shellcheck disable=SC2046 # pkg-config's output is a list of flags
"$cc" "$source/examples/consumer/main.c" -o "$work/consumer_pkgconfig" \
  $(pkg-config --cflags --libs esmm) -Wl,-rpath,"$prefix/$libdir"
"$work/consumer_pkgconfig"

"$prefix/bin/esmm" info >/dev/null
echo "installed esmm: CMake package (shared, static), pkg-config and the esmm tool work"
