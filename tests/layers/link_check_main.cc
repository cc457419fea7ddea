// The body of each gpuplan_<layer>_link_check executable (top-level CMakeLists.txt): the layer's
// library is linked whole, against only the layers below it, so a call from it into a higher
// layer is an undefined symbol and the build fails.
int main() { return 0; }
