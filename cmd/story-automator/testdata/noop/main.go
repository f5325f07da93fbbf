// Command noop does nothing: built static, it is the floor a Stop-hook call
// is measured against (what starting any Go process costs on the machine).
package main

func main() {}
